package workloads

import (
	"encoding/json"
	"fmt"
	"maps"
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

func TestAskOf(t *testing.T) {
	k, _ := Named("Deployment")
	for _, tc := range []struct {
		name                  string
		annotations, template map[string]string
		want                  []string
		matches, misses       []string
	}{
		{name: "none"},
		{name: "reload lists names", annotations: map[string]string{AnnotationReload: " b, a ,,a"}, want: []string{"a", "b"}},
		{name: "auto reads the Pod template", annotations: map[string]string{AnnotationAuto: "true"},
			want: []string{"env", "init-env", "projected", "volume"}},
		{name: "secret auto too, as ParseBool reads it, with reload", annotations: map[string]string{AnnotationSecretAuto: "1", AnnotationReload: "extra"},
			want: []string{"env", "extra", "init-env", "projected", "volume"}},
		{name: "auto false", annotations: map[string]string{AnnotationAuto: "false"}},
		{name: "auto but excluded", annotations: map[string]string{AnnotationAuto: "true", AnnotationExclude: "env, volume"},
			want: []string{"init-env", "projected"}},
		{name: "on the Pod template when the workload has none", template: map[string]string{AnnotationReload: "a"}, want: []string{"a"}},
		{name: "the workload's own first", annotations: map[string]string{AnnotationReload: "a"}, template: map[string]string{AnnotationReload: "b"}, want: []string{"a"}},
		{name: "patterns match whole names", annotations: map[string]string{AnnotationReload: "db-.*, api"}, want: []string{"api"},
			matches: []string{"db-one", "api"}, misses: []string{"xdb-one", "apis"}},
		{name: "a pattern that does not compile is ignored", annotations: map[string]string{AnnotationReload: "db-(, api"}, want: []string{"api"},
			misses: []string{"db-("}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}, Spec: appsv1.DeploymentSpec{
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: tc.template}, Spec: podSpec()}}}
			ask := AskOf(k, d)
			if !slices.Equal(ask.Names, tc.want) {
				t.Errorf("Names = %v, want %v", ask.Names, tc.want)
			}
			for _, n := range tc.matches {
				if !ask.Matches(n) {
					t.Errorf("%s not matched", n)
				}
			}
			for _, n := range tc.misses {
				if ask.Matches(n) {
					t.Errorf("%s matched", n)
				}
			}
		})
	}
}

func TestAskIsBounded(t *testing.T) {
	var names []string
	for i := range 10 * MaxAsked {
		names = append(names, fmt.Sprintf("s%04d", i), fmt.Sprintf("p%04d-.*", i))
	}
	k, _ := Named("StatefulSet")
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationReload: strings.Join(names, ",")}}}
	if ask := AskOf(k, s); len(ask.Names)+len(ask.Patterns) != MaxAsked {
		t.Errorf("%d names and %d patterns asked, want the bound %d together", len(ask.Names), len(ask.Patterns), MaxAsked)
	}
}

// TestTrimKeepsWhatAskingReads: what AskOf reads is the same before and
// after Trim; images, commands, labels, other annotations and status go.
func TestTrimKeepsWhatAskingReads(t *testing.T) {
	for _, k := range Kinds {
		t.Run(k.Name, func(t *testing.T) {
			obj := k.New()
			obj.SetName("w")
			obj.SetResourceVersion("7")
			obj.SetLabels(map[string]string{"team": "a"})
			obj.SetAnnotations(map[string]string{AnnotationAuto: "true", AnnotationRestartedFor: `{"env":"h"}`, "other": strings.Repeat("x", 1<<20)})
			*k.Template(obj) = corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "w"},
				Annotations: map[string]string{AnnotationRestartedAt: "2026-01-01T00:00:00Z", "other": "x"}}, Spec: podSpec()}
			before := AskOf(k, obj)
			if _, err := Trim(obj); err != nil {
				t.Fatal(err)
			}
			if after := AskOf(k, obj); !slices.Equal(before.Names, after.Names) {
				t.Errorf("asked %v before Trim, %v after", before.Names, after.Names)
			}
			if obj.GetResourceVersion() != "7" || obj.GetLabels() != nil || len(obj.GetAnnotations()) != 2 {
				t.Errorf("metadata after Trim: rv %q labels %v annotations %v", obj.GetResourceVersion(), obj.GetLabels(), obj.GetAnnotations())
			}
			tpl := k.Template(obj)
			if tpl.Labels != nil || len(tpl.Spec.Containers) != 0 || len(tpl.Spec.Volumes) != 4 ||
				!maps.Equal(tpl.Annotations, map[string]string{AnnotationRestartedAt: "2026-01-01T00:00:00Z"}) {
				t.Errorf("template after Trim keeps more than what asking reads: %+v", tpl)
			}
		})
	}
}

// TestTrimDropsTheTemplateOfWhatDoesNotAskForAll: a workload that does not
// ask for every Secret it uses keeps none of its template's references,
// however many it has.
func TestTrimDropsTheTemplateOfWhatDoesNotAskForAll(t *testing.T) {
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}
	for i := range 20000 {
		spec.Containers[0].Env = append(spec.Containers[0].Env, corev1.EnvVar{Name: "E", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: ref(fmt.Sprint("s", i)), Key: "k"}}})
	}
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: spec}}}
	auto := d.DeepCopy()
	auto.Annotations = map[string]string{AnnotationAuto: "true"}
	for _, o := range []*appsv1.Deployment{d, auto} {
		if _, err := Trim(o); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(d.Spec.Template.Spec.Volumes) + len(d.Spec.Template.Spec.Containers); n != 0 {
		t.Errorf("a workload not asking for all keeps %d references", n)
	}
	if n := len(auto.Spec.Template.Spec.Volumes); n != MaxAsked || len(auto.Spec.Template.Spec.Containers) != 0 {
		t.Errorf("a workload asking for all keeps %d names, want the bound %d", n, MaxAsked)
	}
}

// TestTrimKeepsWholeRecords: eso's record is never cut (a cut record does
// not parse, and would stop every restart): the longest eso writes is kept
// whole, a longer one dropped.
func TestTrimKeepsWholeRecords(t *testing.T) {
	rec := map[string]string{}
	for i := range MaxAsked {
		rec[fmt.Sprintf("%0253d", i)] = strings.Repeat("h", 64)
	}
	raw, _ := json.Marshal(rec)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationRestartedFor: string(raw)}}}
	if _, err := Trim(d); err != nil {
		t.Fatal(err)
	}
	if got := d.Annotations[AnnotationRestartedFor]; got != string(raw) {
		t.Errorf("the longest record eso writes (%d bytes) was not kept whole: %d bytes", len(raw), len(got))
	}
	d.Annotations[AnnotationRestartedFor] = strings.Repeat("x", maxRecord+1)
	if _, err := Trim(d); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Annotations[AnnotationRestartedFor]; ok {
		t.Error("a record longer than eso writes was kept")
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

// TestAsksAlike: eso's own patch (its record, restartedAt) and labels
// change nothing that asks; an asking annotation, on the workload or its
// template, a Secret reference or a pause does.
func TestAsksAlike(t *testing.T) {
	k, _ := Named("Deployment")
	base := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationAuto: "true"}},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: podSpec()}}}
	for name, tc := range map[string]struct {
		edit  func(*appsv1.Deployment)
		alike bool
	}{
		"eso's patch": {func(d *appsv1.Deployment) {
			d.Annotations[AnnotationRestartedFor] = `{"env":"h"}`
			d.Spec.Template.Annotations = map[string]string{AnnotationRestartedAt: "now"}
		}, true},
		"labels":             {func(d *appsv1.Deployment) { d.Labels = map[string]string{"a": "b"} }, true},
		"reload on it":       {func(d *appsv1.Deployment) { d.Annotations[AnnotationReload] = "x" }, false},
		"reload on template": {func(d *appsv1.Deployment) { d.Spec.Template.Annotations = map[string]string{AnnotationReload: "x"} }, false},
		"a Secret reference": {func(d *appsv1.Deployment) { d.Spec.Template.Spec.Volumes = nil }, false},
		"paused":             {func(d *appsv1.Deployment) { d.Spec.Paused = true }, false},
	} {
		edited := base.DeepCopy()
		tc.edit(edited)
		if got := AsksAlike(k, base, edited); got != tc.alike {
			t.Errorf("%s: AsksAlike = %v, want %v", name, got, tc.alike)
		}
	}
}
