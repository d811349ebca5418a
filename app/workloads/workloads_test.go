package workloads

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ref(name string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: name} }

// podSpec reads Secrets in every way a Pod can.
func podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		Volumes: []corev1.Volume{
			{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "volume"}}},
			{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: ref("projected")}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref("a-configmap")}},
			}}}},
			{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("another-configmap")}}},
		},
		InitContainers: []corev1.Container{{Name: "init", EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: ref("init-env")}}}}},
		Containers: []corev1.Container{{Name: "app", Image: "app:1", Command: []string{"run"},
			Env: []corev1.EnvVar{
				{Name: "A", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: ref("env"), Key: "k"}}},
				{Name: "B", Value: "plain"},
			},
		}},
	}
}

func TestAsked(t *testing.T) {
	k, _ := Named("Deployment")
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        []string
	}{
		{"none", nil, nil},
		{"reload lists names", map[string]string{AnnotationReload: " b, a ,,a"}, []string{"a", "b"}},
		{"auto reads the Pod template", map[string]string{AnnotationAuto: "true"},
			[]string{"env", "init-env", "projected", "volume"}},
		{"secret auto too, with reload", map[string]string{AnnotationSecretAuto: "TRUE", AnnotationReload: "extra"},
			[]string{"env", "extra", "init-env", "projected", "volume"}},
		{"auto false", map[string]string{AnnotationAuto: "false"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}, Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: podSpec()}}}
			if got := Asked(k, d); !slices.Equal(got, tc.want) {
				t.Errorf("Asked = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAskedIsBounded(t *testing.T) {
	var names []string
	for i := range 10 * MaxAsked {
		names = append(names, fmt.Sprintf("s%04d", i))
	}
	k, _ := Named("StatefulSet")
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationReload: strings.Join(names, ",")}}}
	if got := Asked(k, s); len(got) != MaxAsked {
		t.Errorf("%d names asked, want the bound %d", len(got), MaxAsked)
	}
}

// TestTrimKeepsWhatAskingReads: what Asked reads is the same before and
// after Trim; images, commands, labels, other annotations and status go.
func TestTrimKeepsWhatAskingReads(t *testing.T) {
	for _, k := range Kinds {
		t.Run(k.Name, func(t *testing.T) {
			obj := k.New()
			obj.SetName("w")
			obj.SetResourceVersion("7")
			obj.SetLabels(map[string]string{"team": "a"})
			obj.SetAnnotations(map[string]string{AnnotationAuto: "true", AnnotationRestartedFor: `{"env":"h"}`, "other": strings.Repeat("x", 1<<20)})
			*k.Template(obj) = corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "w"}}, Spec: podSpec()}
			before := Asked(k, obj)
			if _, err := Trim(obj); err != nil {
				t.Fatal(err)
			}
			if after := Asked(k, obj); !slices.Equal(before, after) {
				t.Errorf("asked %v before Trim, %v after", before, after)
			}
			if obj.GetResourceVersion() != "7" || obj.GetLabels() != nil || len(obj.GetAnnotations()) != 2 {
				t.Errorf("metadata after Trim: rv %q labels %v annotations %v", obj.GetResourceVersion(), obj.GetLabels(), obj.GetAnnotations())
			}
			tpl := k.Template(obj)
			if tpl.Labels != nil || tpl.Spec.Containers[0].Image != "" || tpl.Spec.Containers[0].Command != nil || len(tpl.Spec.Volumes) != 2 {
				t.Errorf("template after Trim keeps more than Secret references: %+v", tpl)
			}
		})
	}
}

func TestTrimBoundsAnnotations(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationReload: strings.Repeat("name,", 1<<16)}}}
	if _, err := Trim(d); err != nil {
		t.Fatal(err)
	}
	if v := d.Annotations[AnnotationReload]; len(v) > maxAnnotation || !strings.HasSuffix(v, ",") {
		t.Errorf("kept %d bytes ending %q, want at most %d cut at a comma", len(v), v[max(0, len(v)-5):], maxAnnotation)
	}
}

func TestPausedAndNamed(t *testing.T) {
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Paused: true}}
	k, ok := Named("Deployment")
	if !ok || !k.Paused(d) {
		t.Errorf("Named(Deployment) = %v, %v; a paused Deployment reads as paused: %v", k.Name, ok, ok && k.Paused(d))
	}
	if _, ok := Named("Pod"); ok {
		t.Error("a Pod is no workload eso restarts")
	}
}
