package secretstore

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/fake"
	"github.com/eso-dev/eso/providers/plugin"
)

// recorder is the Fake provider under another kind, recording each
// configuration it was asked to validate or log in with, and as whom.
type recorder struct {
	plugin.Provider
	mu        sync.Mutex
	validated []string
}

func (r *recorder) Kind() string { return "Recorder" }

func (r *recorder) record(ref plugin.Ref, scope plugin.Scope) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.validated = append(r.validated, ref.Namespace+"/"+ref.Name+" as "+scope.Namespace)
}

func (r *recorder) NewClient(ctx context.Context, ref plugin.Ref, scope plugin.Scope) (plugin.SecretsClient, error) {
	r.record(ref, scope)
	return r.Provider.NewClient(ctx, ref, scope)
}

func (r *recorder) Validate(ctx context.Context, ref plugin.Ref, scope plugin.Scope) error {
	r.record(ref, scope)
	return r.Provider.Validate(ctx, ref, scope)
}

// statusWrites counts status writes, to show a reconcile with nothing new
// writes nothing.
type statusWrites struct {
	client.Client
	writes *int
}

func (c statusWrites) Status() client.SubResourceWriter {
	return countingStatus{c.Client.Status(), c.writes}
}

type countingStatus struct {
	client.SubResourceWriter
	writes *int
}

func (s countingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	*s.writes++
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

func reconciler(t *testing.T, objs ...client.Object) (*Reconciler, *recorder, *int) {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, ssv2.AddToScheme, provv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	// The configuration the stores name exists in both namespaces (the
	// recorder reads it as a Fake).
	objs = append(objs, &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "config"}},
		&provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "victim", Name: "config"}})
	c := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&ssv2.SecretStore{}, &ssv2.ClusterSecretStore{}).Build()
	rec := &recorder{Provider: fake.Registration.NewProvider(plugin.Deps{Client: c, APIReader: c})}
	catalog, err := plugin.NewIndex([]plugin.Registration{{Name: "recorder", Kind: "Recorder",
		NewConfig:   func() client.Object { return &provv1.Fake{} },
		NewProvider: func(plugin.Deps) plugin.Provider { return rec }}})
	if err != nil {
		t.Fatal(err)
	}
	writes := new(int)
	resolver := stores.NewResolver(c, plugin.NewPlugins(catalog, plugin.Deps{}), stores.NewClientCache(), "")
	return &Reconciler{Client: statusWrites{c, writes}, Resolver: resolver, Recorder: record.NewFakeRecorder(100),
		API: stores.V2APIs[0]}, rec, writes
}

func store(ns, name, configNamespace string) *ssv2.SecretStore {
	return &ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1},
		Spec: ssv2.SecretStoreSpec{ProviderConfig: ssv2.ProviderConfig{
			ProviderRef: ssv2.ProviderRef{Kind: "Recorder", Name: "config", Namespace: configNamespace}}}}
}

func readyOf(t *testing.T, r *Reconciler, s *ssv2.SecretStore) *metav1.Condition {
	t.Helper()
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s)}); err != nil {
		t.Fatalf("%s: %v", s.Name, err)
	}
	var got ssv2.SecretStore
	if err := r.Client.Get(context.Background(), client.ObjectKeyFromObject(s), &got); err != nil {
		t.Fatal(err)
	}
	return meta.FindStatusCondition(got.Status.Conditions, ssv2.ConditionReady)
}

// TestSecretStoreStaysInItsNamespace: a SecretStore naming another
// namespace's provider configuration is refused before the provider is
// asked anything; one naming its own is validated there, with credentials
// of its own namespace, and revalidating it unchanged writes nothing.
func TestSecretStoreStaysInItsNamespace(t *testing.T) {
	elsewhere, own := store("team-a", "elsewhere", "victim"), store("team-a", "own", "")
	r, rec, writes := reconciler(t, elsewhere, own)

	if c := readyOf(t, r, elsewhere); c == nil || c.Status != metav1.ConditionFalse || c.Reason != ssv2.ReasonCrossNamespaceRefused {
		t.Errorf("store naming another namespace: Ready %+v, want False/%s", c, ssv2.ReasonCrossNamespaceRefused)
	}
	if len(rec.validated) != 0 {
		t.Fatalf("the provider was asked about another namespace: %v", rec.validated)
	}

	if c := readyOf(t, r, own); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("store in its own namespace: Ready %+v", c)
	}
	for _, v := range rec.validated {
		if v != "team-a/config as team-a" {
			t.Fatalf("validated %v, want only team-a/config as team-a", rec.validated)
		}
	}
	if len(rec.validated) == 0 {
		t.Fatal("the store's own configuration was never validated")
	}
	before := *writes
	readyOf(t, r, own)
	if *writes != before {
		t.Errorf("revalidating an unchanged store wrote its status %d times", *writes-before)
	}
}

// TestUndecodableStoreIsReportedNotValidated: a store whose spec eso cannot
// decode (stored before the schema refused it) gets Ready=False InvalidSpec
// and nothing of it is used.
func TestUndecodableStoreIsReportedNotValidated(t *testing.T) {
	var broken ssv2.SecretStore
	raw := `{"apiVersion":"secretstore.external-secrets.io/v2alpha1","kind":"SecretStore",
		"metadata":{"namespace":"team-a","name":"broken","generation":1},
		"spec":{"refreshInterval":"banana","providerConfig":{"providerRef":{"kind":"Recorder","name":"config"}}}}`
	if err := json.Unmarshal([]byte(raw), &broken); err != nil {
		t.Fatalf("lenient decoding failed: %v", err)
	}
	r, rec, _ := reconciler(t, &broken)
	c := readyOf(t, r, &broken)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ssv2.ReasonInvalidSpec {
		t.Errorf("Ready %+v, want False/%s", c, ssv2.ReasonInvalidSpec)
	}
	if len(rec.validated) != 0 {
		t.Errorf("an undecodable store was validated: %v", rec.validated)
	}
}
