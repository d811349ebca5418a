package rollout

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/workloads"
)

// harness is a Reconciler over a fake API holding Secret app (eso's, with
// data-hash hash) and Deployment web asking for it.
type harness struct {
	t      *testing.T
	c      client.Client
	r      *Reconciler
	events *record.FakeRecorder
}

func newHarness(t *testing.T, web *appsv1.Deployment) *harness {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, esv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app",
		Annotations: map[string]string{esv1.AnnotationDataHash: "h1"}}}
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret, web).
		WithIndex(&esv1.ExternalSecret{}, indexTargetWorkload, func(client.Object) []string { return nil })
	c := b.Build()
	events := record.NewFakeRecorder(10)
	return &harness{t: t, c: c, events: events, r: &Reconciler{Client: c, APIReader: c, Recorder: events,
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC) }}}
}

func web(annotations map[string]string) *appsv1.Deployment {
	a := map[string]string{workloads.AnnotationReload: "app"}
	for k, v := range annotations {
		a[k] = v
	}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Annotations: a}}
}

func (h *harness) reconcile() *appsv1.Deployment {
	h.t.Helper()
	if _, err := h.r.Reconcile(context.Background(), request("Deployment", "ns", "web")); err != nil {
		h.t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web"}, &d); err != nil {
		h.t.Fatal(err)
	}
	return &d
}

func (h *harness) setHash(hash string) {
	h.t.Helper()
	var s corev1.Secret
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "app"}, &s); err != nil {
		h.t.Fatal(err)
	}
	s.Annotations[esv1.AnnotationDataHash] = hash
	if err := h.c.Update(context.Background(), &s); err != nil {
		h.t.Fatal(err)
	}
}

func restarted(d *appsv1.Deployment) string {
	return d.Spec.Template.Annotations[workloads.AnnotationRestartedAt]
}

func TestFirstSightRecordsThenAChangeRestartsOnce(t *testing.T) {
	h := newHarness(t, web(nil))
	d := h.reconcile()
	if restarted(d) != "" || d.Annotations[workloads.AnnotationRestartedFor] != `{"app":"h1"}` {
		t.Fatalf("first sight: restartedAt %q, record %q", restarted(d), d.Annotations[workloads.AnnotationRestartedFor])
	}
	rv := d.ResourceVersion
	if d = h.reconcile(); d.ResourceVersion != rv {
		t.Errorf("nothing changed, yet the workload was written")
	}
	h.setHash("h2")
	d = h.reconcile()
	if restarted(d) != "2026-01-02T03:04:05.000000006Z" || d.Annotations[workloads.AnnotationRestartedFor] != `{"app":"h2"}` {
		t.Errorf("after a change: restartedAt %q, record %q", restarted(d), d.Annotations[workloads.AnnotationRestartedFor])
	}
	if e := <-h.events.Events; !strings.Contains(e, "RolloutRestarted") || !strings.Contains(e, "app") {
		t.Errorf("event %q", e)
	}
}

func TestPausedDeploymentWaitsForResume(t *testing.T) {
	w := web(map[string]string{workloads.AnnotationRestartedFor: `{"app":"h0"}`})
	w.Spec.Paused = true
	h := newHarness(t, w)
	d := h.reconcile()
	if restarted(d) != "" || d.Annotations[workloads.AnnotationRestartedFor] != `{"app":"h0"}` {
		t.Fatalf("paused: restartedAt %q, record %q", restarted(d), d.Annotations[workloads.AnnotationRestartedFor])
	}
	if e := <-h.events.Events; !strings.Contains(e, "RolloutRestartPaused") {
		t.Errorf("event %q", e)
	}
	d.Spec.Paused = false
	if err := h.c.Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if d = h.reconcile(); restarted(d) == "" || d.Annotations[workloads.AnnotationRestartedFor] != `{"app":"h1"}` {
		t.Errorf("resumed: restartedAt %q, record %q", restarted(d), d.Annotations[workloads.AnnotationRestartedFor])
	}
}

// TestEditedRecordRestartsNothing: a record someone broke counts as none.
func TestEditedRecordRestartsNothing(t *testing.T) {
	h := newHarness(t, web(map[string]string{workloads.AnnotationRestartedFor: "not json"}))
	if d := h.reconcile(); restarted(d) != "" || d.Annotations[workloads.AnnotationRestartedFor] != `{"app":"h1"}` {
		t.Errorf("restartedAt %q, record %q", restarted(d), d.Annotations[workloads.AnnotationRestartedFor])
	}
}

// TestASecretEsoDoesNotManageIsNotRecorded: asking for a Secret eso holds
// no hash of records and restarts nothing.
func TestASecretEsoDoesNotManageIsNotRecorded(t *testing.T) {
	h := newHarness(t, web(map[string]string{workloads.AnnotationReload: "app,someone-elses"}))
	if d := h.reconcile(); d.Annotations[workloads.AnnotationRestartedFor] != `{"app":"h1"}` {
		t.Errorf("record %q", d.Annotations[workloads.AnnotationRestartedFor])
	}
}
