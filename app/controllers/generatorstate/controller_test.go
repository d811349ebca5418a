package generatorstate

import (
	"context"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	"github.com/eso-dev/eso/app/generation"
	"github.com/eso-dev/eso/providers/plugin"
)

// recorder is a generator kind that records every revocation.
type recorder struct {
	mu      sync.Mutex
	revoked []string
	scopes  []string
}

func (r *recorder) Kind() string { return "Recorder" }
func (r *recorder) Generate(context.Context, plugin.Ref, plugin.Scope) (map[string][]byte, plugin.State, error) {
	return nil, nil, nil
}
func (r *recorder) Validate(context.Context, plugin.Ref, plugin.Scope) error { return nil }
func (r *recorder) Cleanup(_ context.Context, ref plugin.Ref, scope plugin.Scope, state plugin.State) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.revoked = append(r.revoked, string(state))
	r.scopes = append(r.scopes, scope.Namespace+"/"+ref.Namespace)
	return nil
}

type fixture struct {
	client   client.Client
	rec      *recorder
	signer   *generation.Signer
	r        *Reconciler
	deadline time.Time
}

func newFixture(t *testing.T, objs ...client.Object) *fixture {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, esv1.AddToScheme, genv2.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&genv2.GeneratorState{}).Build()
	rec := &recorder{}
	catalog, err := plugin.NewIndex([]plugin.Registration{{Name: "recorder", Kind: "Recorder",
		NewGenerator: func(plugin.Deps) plugin.Generator { return rec }}})
	if err != nil {
		t.Fatal(err)
	}
	signer := generation.NewSignerWithKey([]byte("0123456789abcdef0123456789abcdef"))
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	return &fixture{client: c, rec: rec, signer: signer, deadline: now.Add(-time.Minute), r: &Reconciler{
		Client: c, APIReader: c, Signer: signer, Now: func() time.Time { return now },
		Resolver: generation.NewResolver(c, plugin.NewPlugins(catalog, plugin.Deps{}), ""),
	}}
}

// state is a replaced state of ExternalSecret "app" in team-a whose
// replacement delay has passed, recorded by the Recorder kind itself.
func (f *fixture) state(t *testing.T, name string, sign bool) *genv2.GeneratorState {
	t.Helper()
	st := &genv2.GeneratorState{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, Finalizers: []string{genv2.FinalizerCleanup},
			Labels: map[string]string{genv2.LabelExternalSecret: "app"}},
		Spec: genv2.GeneratorStateSpec{
			Generator:                 genv2.GeneratorReference{APIVersion: generation.KindsAPIVersion, Kind: "Recorder", Name: "gen"},
			ProviderRef:               genv2.ProviderRef{Kind: "Recorder", Name: "gen", Namespace: "team-a"},
			CredentialsNamespace:      "team-a",
			State:                     &apiextensionsv1.JSON{Raw: []byte(`{"lease":"` + name + `"}`)},
			GarbageCollectionDeadline: &metav1.Time{Time: f.deadline},
		},
	}
	if sign {
		if err := f.signer.Sign(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.client.Create(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return st
}

func (f *fixture) reconcile(t *testing.T, st *genv2.GeneratorState) error {
	t.Helper()
	_, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(st)})
	return err
}

// TestUnsignedStatesAreDisownedNeverRevoked: a state eso did not sign (a
// tenant's forgery, or one altered after signing) is marked
// Verified=False, loses eso's finalizer and is never handed to its
// generator, whatever it names; a signed one due for collection is revoked
// and deleted.
func TestUnsignedStatesAreDisownedNeverRevoked(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	forged := f.state(t, "forged", false)
	altered := f.state(t, "altered", true)
	orig := altered.DeepCopy()
	altered.Spec.CredentialsNamespace = "victim"
	if err := f.client.Patch(ctx, altered, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*genv2.GeneratorState{forged, altered} {
		if err := f.reconcile(t, st); err != nil {
			t.Fatalf("%s: %v", st.Name, err)
		}
		var got genv2.GeneratorState
		if err := f.client.Get(ctx, client.ObjectKeyFromObject(st), &got); err != nil {
			t.Fatalf("%s: %v (eso must not delete what it did not write)", st.Name, err)
		}
		c := meta.FindStatusCondition(got.Status.Conditions, genv2.ConditionVerified)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "ProvenanceInvalid" {
			t.Errorf("%s: Verified condition %+v, want False/ProvenanceInvalid", st.Name, c)
		}
		if len(got.Finalizers) != 0 {
			t.Errorf("%s: finalizers %v kept", st.Name, got.Finalizers)
		}
	}
	if len(f.rec.revoked) != 0 {
		t.Fatalf("unsigned states were revoked: %v", f.rec.revoked)
	}

	signed := f.state(t, "signed", true)
	if err := f.reconcile(t, signed); err != nil {
		t.Fatal(err)
	}
	if len(f.rec.revoked) != 1 || f.rec.revoked[0] != `{"lease":"signed"}` || f.rec.scopes[0] != "team-a/team-a" {
		t.Fatalf("revoked %v in %v, want the signed state's lease in team-a", f.rec.revoked, f.rec.scopes)
	}
	if err := f.client.Get(ctx, client.ObjectKeyFromObject(signed), &genv2.GeneratorState{}); err == nil {
		t.Error("a revoked state was not deleted")
	}
}

// TestSignedStatesStayInTheirNamespace: even a state eso signed may not
// name another namespace's configuration or credentials for a generator
// that is not a ClusterGenerator; revocation is refused and the state kept.
func TestSignedStatesStayInTheirNamespace(t *testing.T) {
	f := newFixture(t)
	st := &genv2.GeneratorState{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "elsewhere", Finalizers: []string{genv2.FinalizerCleanup},
			Labels: map[string]string{genv2.LabelExternalSecret: "app"}},
		Spec: genv2.GeneratorStateSpec{
			Generator:                 genv2.GeneratorReference{APIVersion: generation.KindsAPIVersion, Kind: "Recorder", Name: "gen"},
			ProviderRef:               genv2.ProviderRef{Kind: "Recorder", Name: "gen", Namespace: "victim"},
			CredentialsNamespace:      "victim",
			State:                     &apiextensionsv1.JSON{Raw: []byte(`{"lease":"x"}`)},
			GarbageCollectionDeadline: &metav1.Time{Time: f.deadline},
		},
	}
	if err := f.signer.Sign(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Create(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if err := f.reconcile(t, st); err == nil {
		t.Error("a state naming another namespace was collected")
	}
	if len(f.rec.revoked) != 0 {
		t.Fatalf("revoked with another namespace's credentials: %v", f.rec.scopes)
	}
	var got genv2.GeneratorState
	if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(st), &got); err != nil || len(got.Finalizers) != 1 {
		t.Errorf("the state is gone or released (%v): its revocation failed, it must stay", err)
	}
}
