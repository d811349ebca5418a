package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/workloads"
)

// deployment is a Deployment of one container reading Secret app through
// env, with annotations.
func deployment(ns, name string, annotations map[string]string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "app:1",
					EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}},
				}}},
			},
		},
	}
}

// restartedAt is the Pod template's restartedAt annotation of a workload,
// and its generation.
func restartedAt(t *testing.T, obj client.Object) (string, int64) {
	t.Helper()
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	var tpl *corev1.PodTemplateSpec
	switch o := obj.(type) {
	case *appsv1.Deployment:
		tpl = &o.Spec.Template
	case *appsv1.StatefulSet:
		tpl = &o.Spec.Template
	case *appsv1.DaemonSet:
		tpl = &o.Spec.Template
	}
	return tpl.Annotations[workloads.AnnotationRestartedAt], obj.GetGeneration()
}

// TestRolloutRestarts: with --rollout-restarts, the workloads that ask for
// Secret app (Reloader's reload and auto annotations, an ExternalSecret's
// rolloutRestartTargets) are restarted once per change of its data: not
// when eso creates it, not on a refresh that changes nothing; the workloads
// that do not ask, and those of another namespace, never.
func TestRolloutRestarts(t *testing.T) {
	cfg := testConfig()
	cfg.RolloutRestarts = true
	runEso(t, cfg)
	ctx := context.Background()
	ns := env.Namespace(t, "rollout", nil)
	other := env.Namespace(t, "rollout-other", nil)

	reload := deployment(ns, "reload", map[string]string{workloads.AnnotationReload: "unrelated, app"})
	auto := deployment(ns, "auto", map[string]string{workloads.AnnotationAuto: "true"})
	named := deployment(ns, "named", nil)
	bystander := deployment(ns, "bystander", nil)
	// Another namespace's workload asking for a Secret of the same name,
	// which that namespace does not have: a change of ns's app must not
	// reach it.
	elsewhere := deployment(other, "reload", map[string]string{workloads.AnnotationReload: "app"})
	labels := map[string]string{"app": "db"}
	stateful := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db", Annotations: map[string]string{workloads.AnnotationSecretAuto: "true"}},
		Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "db", Image: "db:1"}},
				Volumes:    []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "app"}}}},
			}},
		},
	}
	daemon := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			// Asking on the Pod template, as Reloader also reads it.
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"},
				Annotations: map[string]string{workloads.AnnotationReload: "ap+"}}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "agent", Image: "agent:1"}},
			}},
		},
	}
	create(t, reload, auto, named, bystander, elsewhere, stateful, daemon)
	asking := []client.Object{reload, auto, named, stateful, daemon}
	quiet := []client.Object{bystander, elsewhere}

	fake := fakeConfig(ns, "fake", map[string]string{"password": "one"})
	create(t, fake, secretStore(ns, "store", storeSpec("Fake", "fake", "")))
	es := externalSecret(ns, "app", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("password", "")})
	es.Spec.RolloutRestartTargets = []esv1.RolloutRestartTarget{{Kind: "Deployment", Name: "named"}, {Kind: "Deployment", Name: "missing"}}
	create(t, es)
	waitSecretData(t, ns, "app", map[string]string{"password": "one"})

	// First sight: recorded, not restarted.
	eventually(t, "the asking workloads to record Secret app", func() error {
		for _, w := range asking {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
				return err
			}
			if w.GetAnnotations()[workloads.AnnotationRestartedFor] == "" {
				return fmt.Errorf("%s has no record yet", w.GetName())
			}
		}
		return nil
	})
	noRestart := func(what string, objs []client.Object, was map[string]string) {
		t.Helper()
		consistently(t, 2*time.Second, what, func() error {
			for _, w := range objs {
				if at, _ := restartedAt(t, w); at != was[w.GetNamespace()+"/"+w.GetName()] {
					return fmt.Errorf("%s/%s restarted at %q", w.GetNamespace(), w.GetName(), at)
				}
			}
			return nil
		})
	}
	noRestart("creating the Secret restarts nothing", append(asking, quiet...), map[string]string{})

	// A workload that asks after the Secret exists is recorded, not
	// restarted, and then restarted with the others.
	late := deployment(ns, "late", map[string]string{workloads.AnnotationReload: "app"})
	create(t, late)
	asking = append(asking, late)
	eventually(t, "the late workload to record Secret app", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(late), late); err != nil {
			return err
		}
		if late.Annotations[workloads.AnnotationRestartedFor] == "" {
			return fmt.Errorf("no record yet")
		}
		return nil
	})

	// A refresh that changes nothing restarts nothing; nor does a write of
	// the Secret's metadata only (the ExternalSecret's labels follow it).
	refreshed := func(value string) {
		t.Helper()
		before := es.Status.SyncedResourceVersion
		annotate(t, es, esv1.AnnotationForceSync, value)
		eventually(t, "the ExternalSecret to sync again", func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
				return err
			}
			if es.Status.SyncedResourceVersion == before {
				return fmt.Errorf("still at %s", before)
			}
			return nil
		})
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
		t.Fatal(err)
	}
	refreshed("1")
	patch := client.MergeFrom(es.DeepCopy())
	es.Labels = map[string]string{"team": "shop"}
	if err := env.Client.Patch(ctx, es, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Secret to carry the ExternalSecret's new label", func() error {
		var s corev1.Secret
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app"}, &s); err != nil {
			return err
		}
		if s.Labels["team"] != "shop" {
			return fmt.Errorf("labels %v", s.Labels)
		}
		return nil
	})
	noRestart("a refresh without change, or a metadata write, restarts nothing", append(asking, quiet...), map[string]string{})

	// A change restarts every asking workload once, and nothing else.
	change := func(value string) map[string]string {
		t.Helper()
		before := map[string]int64{}
		for _, w := range asking {
			_, before[w.GetName()] = restartedAt(t, w)
		}
		patch := client.MergeFrom(fake.DeepCopy())
		fake.Spec.Data[0].Value = value
		if err := env.Client.Patch(ctx, fake, patch); err != nil {
			t.Fatal(err)
		}
		waitSecretData(t, ns, "app", map[string]string{"password": value})
		at := map[string]string{}
		eventually(t, "every asking workload to restart", func() error {
			for _, w := range asking {
				when, generation := restartedAt(t, w)
				if when == "" || generation == before[w.GetName()] {
					return fmt.Errorf("%s not restarted", w.GetName())
				}
				at[w.GetNamespace()+"/"+w.GetName()] = when
			}
			return nil
		})
		noRestart("one change restarts once, and only the asking workloads", append(asking, quiet...), at)
		for _, w := range asking {
			if _, generation := restartedAt(t, w); generation != before[w.GetName()]+1 {
				t.Errorf("%s: generation %d -> %d, want one new rollout", w.GetName(), before[w.GetName()], generation)
			}
		}
		return at
	}
	first := change("two")
	refreshed("2")
	noRestart("a refresh without change after a restart restarts nothing", append(asking, quiet...), first)
	second := change("three")
	for k, v := range second {
		if first[k] == v {
			t.Errorf("%s: restartedAt did not move (%s)", k, v)
		}
	}
}
