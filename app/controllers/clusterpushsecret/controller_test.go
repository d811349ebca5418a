package clusterpushsecret

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
)

var ctx = context.Background()

func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

var shared = map[string]string{"shared": "yes"}

// clusterPushSecret pushes Secret "db" of every namespace labelled shared.
func clusterPushSecret(mutate ...func(*esv1alpha1.ClusterPushSecret)) *esv1alpha1.ClusterPushSecret {
	cps := &esv1alpha1.ClusterPushSecret{ObjectMeta: metav1.ObjectMeta{Name: "push-db", UID: types.UID("cps-uid"), Generation: 1},
		Spec: esv1alpha1.ClusterPushSecretSpec{
			NamespaceSelectors: []*metav1.LabelSelector{{MatchLabels: shared}},
			PushSecretSpec: esv1alpha1.PushSecretSpec{
				SecretStoreRefs: []esv1alpha1.PushSecretStoreRef{{Name: "platform", Kind: "ClusterSecretStore"}},
				Selector:        esv1alpha1.PushSecretSelector{Secret: &esv1alpha1.PushSecretSecret{Name: "db"}},
			},
			PushSecretMetadata: esv1alpha1.PushSecretMetadata{Labels: map[string]string{"team": "platform"}},
		}}
	for _, m := range mutate {
		m(cps)
	}
	return cps
}

type fixture struct {
	c      client.Client
	r      reconcile.Reconciler
	events *record.FakeRecorder
	cps    *esv1alpha1.ClusterPushSecret
}

func newFixture(t *testing.T, cps *esv1alpha1.ClusterPushSecret, objs ...client.Object) *fixture {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, esv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := ctrlfake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&esv1alpha1.ClusterPushSecret{}).
		WithObjects(append(objs, cps)...).Build()
	events := record.NewFakeRecorder(100)
	return &fixture{c: c, r: kind.Reconciler(c, events), events: events, cps: cps}
}

// reconcile runs one reconcile and reads the ClusterPushSecret back.
func (f *fixture) reconcile(t *testing.T) {
	t.Helper()
	if _, err := f.r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.cps)}); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(f.cps), f.cps); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) ready(t *testing.T) *metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(f.cps.Status.Conditions, esv1alpha1.ConditionReady)
	if c == nil {
		t.Fatal("no Ready condition")
	}
	return c
}

func (f *fixture) pushSecret(namespace, name string) (*esv1alpha1.PushSecret, error) {
	var ps esv1alpha1.PushSecret
	err := f.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &ps)
	return &ps, err
}

func TestReconcile(t *testing.T) {
	for name, tc := range map[string]struct {
		cps             *esv1alpha1.ClusterPushSecret
		objs            []client.Object
		wantReason      string
		wantProvisioned []string
		wantFailed      []string
		wantName        string
	}{
		"a PushSecret in every namespace selected": {
			cps:        clusterPushSecret(),
			objs:       []client.Object{namespace("team-a", shared), namespace("team-b", shared), namespace("team-c", nil)},
			wantReason: esv1.ReasonProvisioned, wantProvisioned: []string{"team-a", "team-b"}, wantName: "push-db",
		},
		"named as spec.pushSecretName says": {
			cps:        clusterPushSecret(func(c *esv1alpha1.ClusterPushSecret) { c.Spec.PushSecretName = "db-out" }),
			objs:       []client.Object{namespace("team-a", shared)},
			wantReason: esv1.ReasonProvisioned, wantProvisioned: []string{"team-a"}, wantName: "db-out",
		},
		"no namespace selected": {
			cps: clusterPushSecret(), objs: []client.Object{namespace("team-c", nil)},
			wantReason: esv1.ReasonProvisioned, wantName: "push-db",
		},
		"a tenant's own PushSecret of that name is a failed namespace": {
			cps: clusterPushSecret(),
			objs: []client.Object{namespace("team-a", shared), namespace("team-b", shared),
				&esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "push-db"}}},
			wantReason: esv1.ReasonNamespacesFailed, wantProvisioned: []string{"team-a"}, wantFailed: []string{"team-b"}, wantName: "push-db",
		},
		"a selector that does not parse": {
			cps: clusterPushSecret(func(c *esv1alpha1.ClusterPushSecret) {
				c.Spec.NamespaceSelectors = []*metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Near"}}}}
			}),
			wantReason: esv1.ReasonInvalidSelector,
		},
		"a spec that did not decode": {
			cps: clusterPushSecret(func(c *esv1alpha1.ClusterPushSecret) {
				c.Annotations = map[string]string{"eso.external-secrets.io/decode-error": "spec.refreshInterval: bad"}
			}),
			objs:       []client.Object{namespace("team-a", shared)},
			wantReason: esv1alpha1.ReasonInvalidSpec,
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.cps, tc.objs...)
			f.reconcile(t)
			if r := f.ready(t).Reason; r != tc.wantReason {
				t.Errorf("Ready reason %s, want %s", r, tc.wantReason)
			}
			if !slices.Equal(f.cps.Status.ProvisionedNamespaces, tc.wantProvisioned) || f.cps.Status.PushSecretName != tc.wantName {
				t.Errorf("provisioned %v as %q, want %v as %q", f.cps.Status.ProvisionedNamespaces, f.cps.Status.PushSecretName, tc.wantProvisioned, tc.wantName)
			}
			var failed []string
			for _, fn := range f.cps.Status.FailedNamespaces {
				failed = append(failed, fn.Namespace)
			}
			if !slices.Equal(failed, tc.wantFailed) {
				t.Errorf("failed %v, want %v", failed, tc.wantFailed)
			}
			for _, ns := range tc.wantProvisioned {
				ps, err := f.pushSecret(ns, tc.wantName)
				if err != nil || !metav1.IsControlledBy(ps, f.cps) || ps.Labels["team"] != "platform" || ps.Spec.Selector.Secret.Name != "db" {
					t.Errorf("%s: %v, %+v", ns, err, ps.ObjectMeta)
				}
			}
			if want := tc.wantReason != esv1.ReasonProvisioned; want != (len(f.events.Events) > 0) {
				t.Errorf("events %d, want a warning: %v", len(f.events.Events), want)
			}
		})
	}
}

// TestChildrenFollowTheParent: an edited PushSecret is reverted, one whose
// namespace leaves the selection is deleted, a renamed one replaced, and a
// reconcile that changes nothing writes nothing.
func TestChildrenFollowTheParent(t *testing.T) {
	f := newFixture(t, clusterPushSecret(), namespace("team-a", shared), namespace("team-b", shared))
	f.reconcile(t)

	ps, err := f.pushSecret("team-a", "push-db")
	if err != nil {
		t.Fatal(err)
	}
	ps.Spec.Selector.Secret.Name = "tenants-choice"
	if err := f.c.Update(ctx, ps); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
	if ps, _ = f.pushSecret("team-a", "push-db"); ps.Spec.Selector.Secret.Name != "db" {
		t.Errorf("an edited PushSecret was not reverted: %+v", ps.Spec.Selector)
	}

	statusVersion := f.cps.ResourceVersion
	childVersion := ps.ResourceVersion
	f.reconcile(t)
	if ps, _ = f.pushSecret("team-a", "push-db"); f.cps.ResourceVersion != statusVersion || ps.ResourceVersion != childVersion {
		t.Errorf("a reconcile that changed nothing wrote: status %s -> %s, PushSecret %s -> %s",
			statusVersion, f.cps.ResourceVersion, childVersion, ps.ResourceVersion)
	}

	if err := f.c.Update(ctx, namespace("team-b", nil)); err != nil {
		t.Fatal(err)
	}
	f.cps.Spec.PushSecretName = "db-out"
	if err := f.c.Update(ctx, f.cps); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
	for _, gone := range []types.NamespacedName{{Namespace: "team-b", Name: "push-db"}, {Namespace: "team-a", Name: "push-db"}} {
		if _, err := f.pushSecret(gone.Namespace, gone.Name); !apierrors.IsNotFound(err) {
			t.Errorf("%s was not pruned: %v", gone, err)
		}
	}
	if _, err := f.pushSecret("team-a", "db-out"); err != nil {
		t.Errorf("the renamed PushSecret: %v", err)
	}
	if !slices.Equal(f.cps.Status.ProvisionedNamespaces, []string{"team-a"}) {
		t.Errorf("provisioned %v", f.cps.Status.ProvisionedNamespaces)
	}
}

// TestATenantsLabelledPushSecretIsNeverPruned: the owner label alone,
// without the controller reference, does not make a PushSecret the
// ClusterPushSecret's.
func TestATenantsLabelledPushSecretIsNeverPruned(t *testing.T) {
	tenants := &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-c", Name: "push-db",
		Labels: map[string]string{esv1alpha1.LabelClusterPushSecret: "push-db"}}}
	f := newFixture(t, clusterPushSecret(), namespace("team-c", nil), tenants)
	f.reconcile(t)
	if _, err := f.pushSecret("team-c", "push-db"); err != nil {
		t.Errorf("the tenant's PushSecret was deleted: %v", err)
	}
}
