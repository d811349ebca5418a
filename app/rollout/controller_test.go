package rollout

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

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

func newHarness(t *testing.T, web *appsv1.Deployment, more ...client.Object) *harness {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, esv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app",
		Annotations: map[string]string{esv1.AnnotationDataHash: "h1"}}}
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(more, secret, web)...).
		WithIndex(&esv1.ExternalSecret{}, indexTargetWorkload, targetWorkloadsOf)
	c := b.Build()
	events := record.NewFakeRecorder(10)
	return &harness{t: t, c: c, events: events, r: &Reconciler{Client: c, SecretMetadata: c, APIReader: c, Recorder: events,
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
	d, _ := h.reconcileResult()
	return d
}

func (h *harness) reconcileResult() (*appsv1.Deployment, ctrl.Result) {
	h.t.Helper()
	res, err := h.r.Reconcile(context.Background(), request("Deployment", "ns", "web"))
	if err != nil {
		h.t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web"}, &d); err != nil {
		h.t.Fatal(err)
	}
	return &d, res
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
	if restarted(d) != "2026-01-02T03:04:05Z" || d.Annotations[workloads.AnnotationRestartedFor] != `{"app":"h2"}` {
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

// TestASecondChangeWithinTheSecondWaits: kubectl's restartedAt has
// seconds, so a restart in the second of the last one waits for the next
// instead of being lost.
func TestASecondChangeWithinTheSecondWaits(t *testing.T) {
	h := newHarness(t, web(map[string]string{workloads.AnnotationRestartedFor: `{"app":"h0"}`}))
	h.reconcile()
	h.setHash("h2")
	d, res := h.reconcileResult()
	if restarted(d) != "2026-01-02T03:04:05Z" || res.RequeueAfter != time.Second || d.Annotations[workloads.AnnotationRestartedFor] != `{"app":"h1"}` {
		t.Errorf("a change in the same second: restartedAt %q, requeue %v, record %q", restarted(d), res.RequeueAfter, d.Annotations[workloads.AnnotationRestartedFor])
	}
	h.r.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC) }
	if d = h.reconcile(); restarted(d) != "2026-01-02T03:04:06Z" || d.Annotations[workloads.AnnotationRestartedFor] != `{"app":"h2"}` {
		t.Errorf("the next second: restartedAt %q, record %q", restarted(d), d.Annotations[workloads.AnnotationRestartedFor])
	}
}

// TestNamedByAnExternalSecret: a workload without annotations is asked for
// the target of an ExternalSecret of its namespace naming it; one of
// another namespace naming it does nothing.
func TestNamedByAnExternalSecret(t *testing.T) {
	named := func(ns, target string) *esv1.ExternalSecret {
		return &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "es-" + ns},
			Spec: esv1.ExternalSecretSpec{Target: esv1.ExternalSecretTarget{Name: target},
				RolloutRestartTargets: []esv1.RolloutRestartTarget{{Kind: "Deployment", Name: "web"}}}}
	}
	w := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	h := newHarness(t, w, named("other", "app"))
	if d := h.reconcile(); d.Annotations[workloads.AnnotationRestartedFor] != "" {
		t.Fatalf("named from another namespace: record %q", d.Annotations[workloads.AnnotationRestartedFor])
	}
	if err := h.c.Create(context.Background(), named("ns", "app")); err != nil {
		t.Fatal(err)
	}
	if d := h.reconcile(); d.Annotations[workloads.AnnotationRestartedFor] != `{"app":"h1"}` {
		t.Fatalf("named in its namespace: record %q", d.Annotations[workloads.AnnotationRestartedFor])
	}
	h.setHash("h2")
	if d := h.reconcile(); restarted(d) == "" {
		t.Error("a change of the named target did not restart")
	}
}

// TestPatternsAskForEsosSecrets: a reload pattern asks for the Secrets
// eso manages in the namespace whose whole name it matches.
func TestPatternsAskForEsosSecrets(t *testing.T) {
	h := newHarness(t, web(map[string]string{workloads.AnnotationReload: "ap.*"}))
	if d := h.reconcile(); d.Annotations[workloads.AnnotationRestartedFor] != `{"app":"h1"}` {
		t.Errorf("record %q", d.Annotations[workloads.AnnotationRestartedFor])
	}
}

// TestARecordNoLongerNeededGoes: a workload that stops asking loses eso's
// record instead of keeping an empty one.
func TestARecordNoLongerNeededGoes(t *testing.T) {
	w := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web",
		Annotations: map[string]string{workloads.AnnotationRestartedFor: `{"app":"h1"}`}}}
	h := newHarness(t, w)
	if d := h.reconcile(); len(d.Annotations) != 0 {
		t.Errorf("annotations %v, want eso's record gone", d.Annotations)
	}
}

// TestRefusesToStartWithoutPermission: without list, watch and patch on
// the workloads, eso says which is missing instead of starting a cache
// that cannot sync.
func TestRefusesToStartWithoutPermission(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := authorizationv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	allow := func(deny string) client.Client {
		return fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
			Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
				r := obj.(*authorizationv1.SelfSubjectAccessReview)
				a := r.Spec.ResourceAttributes
				r.Status.Allowed = a.Verb+" "+a.Resource+" "+a.Namespace != deny
				return nil
			},
		}).Build()
	}
	ctx := context.Background()
	if err := permitted(ctx, allow(""), []string{"a", "b"}); err != nil {
		t.Errorf("all granted: %v", err)
	}
	err := permitted(ctx, allow("patch daemonsets b"), []string{"a", "b"})
	if err == nil || !strings.Contains(err.Error(), "may not patch daemonsets.apps in namespace b") {
		t.Errorf("patch on DaemonSets in b denied: %v", err)
	}
	if err := permitted(ctx, allow("watch deployments "), nil); err == nil || !strings.Contains(err.Error(), "cluster-wide") {
		t.Errorf("cluster-wide watch denied: %v", err)
	}
}
