package clusterpushsecret

import (
	"context"
	"maps"
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
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/app/fanout"
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

// pushSecretLists counts the lists of PushSecrets, and those not narrowed
// by a field selector (every PushSecret of the cluster).
var pushSecretLists, unboundedLists int

func countLists(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*esv1alpha1.PushSecretList); ok {
		pushSecretLists++
		if o := (&client.ListOptions{}).ApplyOptions(opts); o.FieldSelector == nil {
			unboundedLists++
		}
	}
	return c.List(ctx, list, opts...)
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
		WithIndex(&esv1alpha1.PushSecret{}, fanout.IndexController, fanout.ControllerUID).
		WithInterceptorFuncs(interceptor.Funcs{List: countLists}).
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
		// wantFailedReason is upstream's words for each failed namespace.
		wantFailedReason string
		wantName         string
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
			wantFailedReason: "push secret already exists in namespace",
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
				if fn.Reason != tc.wantFailedReason {
					t.Errorf("%s failed for %q, want %q", fn.Namespace, fn.Reason, tc.wantFailedReason)
				}
			}
			if !slices.Equal(failed, tc.wantFailed) {
				t.Errorf("failed %v, want %v", failed, tc.wantFailed)
			}
			for _, ns := range tc.wantProvisioned {
				ps, err := f.pushSecret(ns, tc.wantName)
				// Exactly pushSecretMetadata's labels, as upstream: no owner label.
				if err != nil || !metav1.IsControlledBy(ps, f.cps) || !maps.Equal(ps.Labels, map[string]string{"team": "platform"}) || ps.Spec.Selector.Secret.Name != "db" {
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

// TestATenantsPushSecretIsNeverPrunedNorAdopted: a PushSecret of the
// children's name that the ClusterPushSecret does not control (no
// controller reference, or only a plain owner reference to it) is neither
// taken over in a selected namespace nor deleted in another.
func TestATenantsPushSecretIsNeverPrunedNorAdopted(t *testing.T) {
	cps := clusterPushSecret()
	plainRef := metav1.OwnerReference{APIVersion: esv1alpha1.GroupVersion.String(), Kind: "ClusterPushSecret", Name: cps.Name, UID: cps.UID}
	selected := &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "push-db",
		OwnerReferences: []metav1.OwnerReference{plainRef}}}
	unselected := &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-c", Name: "push-db"}}
	f := newFixture(t, cps, namespace("team-b", shared), namespace("team-c", nil), selected, unselected)
	f.reconcile(t)
	for _, theirs := range []*esv1alpha1.PushSecret{selected, unselected} {
		ps, err := f.pushSecret(theirs.Namespace, theirs.Name)
		if err != nil {
			t.Errorf("the tenant's PushSecret in %s was deleted: %v", theirs.Namespace, err)
			continue
		}
		if metav1.IsControlledBy(ps, f.cps) || ps.Spec.Selector.Secret != nil {
			t.Errorf("the tenant's PushSecret in %s was taken over: %+v", theirs.Namespace, ps)
		}
	}
	if len(f.cps.Status.FailedNamespaces) != 1 || f.cps.Status.FailedNamespaces[0].Namespace != "team-b" {
		t.Errorf("failed namespaces %+v, want team-b", f.cps.Status.FailedNamespaces)
	}
}

// TestAnEarlierOwnerLabelIsRemoved: a PushSecret created by an eso that
// still labelled its children loses that label: it carries exactly what
// pushSecretMetadata says.
func TestAnEarlierOwnerLabelIsRemoved(t *testing.T) {
	f := newFixture(t, clusterPushSecret(), namespace("team-a", shared))
	f.reconcile(t)
	ps, err := f.pushSecret("team-a", "push-db")
	if err != nil {
		t.Fatal(err)
	}
	ps.Labels["pushsecrets.external-secrets.io/cluster-push-secret"] = "push-db"
	if err := f.c.Update(ctx, ps); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
	if ps, _ = f.pushSecret("team-a", "push-db"); !maps.Equal(ps.Labels, map[string]string{"team": "platform"}) {
		t.Errorf("labels %v, want exactly pushSecretMetadata's", ps.Labels)
	}
}

// TestChildrenAreFoundByIndex: a reconcile finds the PushSecrets it owns
// through the controller index, never by listing every PushSecret of the
// cluster, however many namespaces it selects.
func TestChildrenAreFoundByIndex(t *testing.T) {
	objs := []client.Object{}
	for _, ns := range []string{"team-a", "team-b", "team-c", "team-d"} {
		objs = append(objs, namespace(ns, shared), &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenants-own"}})
	}
	f := newFixture(t, clusterPushSecret(), objs...)
	pushSecretLists, unboundedLists = 0, 0
	f.reconcile(t)
	if pushSecretLists != 1 || unboundedLists != 0 {
		t.Errorf("%d lists of PushSecrets, %d of them of every PushSecret; want one, through the index", pushSecretLists, unboundedLists)
	}
	if len(f.cps.Status.ProvisionedNamespaces) != 4 {
		t.Errorf("provisioned %v", f.cps.Status.ProvisionedNamespaces)
	}
}
