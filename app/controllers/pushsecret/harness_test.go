package pushsecret

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8srecord "k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/secrettemplate"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// The harness of the step tests: a fake API client holding the objects a
// test names, stores served by an in-memory backend that records what it
// is asked, and a Reconciler over both.

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// memBackend is a provider kind "Fake" whose every configuration shares
// one map of remote secrets.
type memBackend struct {
	mu      sync.Mutex
	secrets map[string][]byte
	// foreign are remote keys eso did not create.
	foreign map[string]bool
	// refuse fails every push or delete of these keys.
	refuse  map[string]error
	pushes  []string
	deletes []string
}

func newMemBackend() *memBackend {
	return &memBackend{secrets: map[string][]byte{}, foreign: map[string]bool{}, refuse: map[string]error{}}
}

func (b *memBackend) Kind() string { return "Fake" }

func (b *memBackend) NewClient(context.Context, plugin.Ref, plugin.Scope) (plugin.SecretsClient, error) {
	return memClient{b}, nil
}

func (b *memBackend) Validate(context.Context, plugin.Ref, plugin.Scope) error { return nil }

func (b *memBackend) value(key string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.secrets[key]
	return string(v), ok
}

type memClient struct{ b *memBackend }

func (c memClient) GetSecret(_ context.Context, ref esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	if v, ok := c.b.secrets[ref.Key]; ok {
		return v, nil
	}
	return nil, plugin.ErrSecretNotFound
}

func (c memClient) GetSecretMap(context.Context, esv1.ExternalSecretDataRemoteRef) (map[string][]byte, error) {
	return nil, plugin.ErrNotSupported
}

func (c memClient) GetAllSecrets(context.Context, esv1.ExternalSecretFind) (map[string][]byte, error) {
	return nil, plugin.ErrNotSupported
}

func (c memClient) Capabilities() plugin.Capabilities { return plugin.ReadWrite }

func (c memClient) Close(context.Context) error { return nil }

func (c memClient) PushSecret(_ context.Context, req plugin.PushRequest) error {
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	if err := c.b.refuse[req.RemoteKey]; err != nil {
		return err
	}
	if c.b.foreign[req.RemoteKey] && !req.Adopt {
		return plugin.ErrNotManaged
	}
	delete(c.b.foreign, req.RemoteKey)
	c.b.secrets[req.RemoteKey] = req.Value
	c.b.pushes = append(c.b.pushes, req.RemoteKey)
	return nil
}

func (c memClient) DeleteSecret(_ context.Context, remoteKey, _ string) error {
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	if err := c.b.refuse[remoteKey]; err != nil {
		return err
	}
	delete(c.b.secrets, remoteKey)
	c.b.deletes = append(c.b.deletes, remoteKey)
	return nil
}

func (c memClient) SecretExists(_ context.Context, remoteKey string) (bool, error) {
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	_, ok := c.b.secrets[remoteKey]
	return ok, nil
}

// harness is a Reconciler over a fake API client and a memBackend.
type harness struct {
	r       *Reconciler
	c       client.Client
	backend *memBackend
	events  *k8srecord.FakeRecorder
	now     time.Time
}

func newHarness(t *testing.T, objs ...client.Object) *harness {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, esv1.AddToScheme, esv1alpha1.AddToScheme, ssv2.AddToScheme, provv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	b := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&esv1alpha1.PushSecret{})
	for field, extract := range Indexes() {
		b = b.WithIndex(&esv1alpha1.PushSecret{}, field, extract)
	}
	c := b.Build()
	h := &harness{c: c, backend: newMemBackend(), events: k8srecord.NewFakeRecorder(100), now: t0}
	catalog, err := plugin.NewIndex([]plugin.Registration{{Name: "mem", Kind: "Fake", AddToScheme: provv1.AddToScheme,
		NewConfig: func() client.Object { return &provv1.Fake{} }, NewProvider: func(plugin.Deps) plugin.Provider { return h.backend }}})
	if err != nil {
		t.Fatal(err)
	}
	resolver := stores.NewResolver(c, plugin.NewPlugins(catalog, plugin.Deps{Client: c, APIReader: c}), stores.NewClientCache(), "")
	h.r = &Reconciler{Client: c, APIReader: c, Resolver: resolver, Recorder: h.events, Now: func() time.Time { return h.now }}
	return h
}

// scope is a sync of ps as Reconcile would start it.
func (h *harness) scope(ps *esv1alpha1.PushSecret) *syncScope {
	return &syncScope{ps: ps, before: ps.Status.DeepCopy(), budget: secrettemplate.NewBudget()}
}

// run runs the steps of a sync up to and including last, failing the test
// on an early end or error.
func (h *harness) run(t *testing.T, sc *syncScope, last string) {
	t.Helper()
	for _, st := range h.r.steps() {
		end, err := st(context.Background(), sc)
		if end != next || err != nil {
			t.Fatalf("a step before %s ended the sync: %v, %v", last, end, err)
		}
		if stepName(st) == last {
			return
		}
	}
	t.Fatalf("no step %s", last)
}

// stepName is a step's name: its method's, as steps() lists it.
func stepName(st step) string {
	name := goruntime.FuncForPC(reflect.ValueOf(st).Pointer()).Name()
	name = strings.TrimSuffix(name, "-fm") // a method value
	return name[strings.LastIndex(name, ".")+1:]
}

// Fixtures: team-a's config, its stores and the Secrets it pushes.

func fakeConfig(ns string) *provv1.Fake {
	return &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg", UID: "cfg-uid", Generation: 1}}
}

func secretStore(name string, labels map[string]string, mutate ...func(*ssv2.SecretStore)) *ssv2.SecretStore {
	s := &ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, Labels: labels, Generation: 1},
		Spec: ssv2.SecretStoreSpec{ProviderConfig: ssv2.ProviderConfig{ProviderRef: ssv2.ProviderRef{Kind: "Fake", Name: "cfg"}}}}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func sourceSecret(name string, data map[string]string, mutate ...func(*corev1.Secret)) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, ResourceVersion: "7"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

// pushSecret pushes Secret "src" to SecretStore "vault", key "pw" to remote
// key "app/pw".
func pushSecret(mutate ...func(*esv1alpha1.PushSecret)) *esv1alpha1.PushSecret {
	ps := &esv1alpha1.PushSecret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "p", UID: "p-uid", Generation: 1},
		Spec: esv1alpha1.PushSecretSpec{
			SecretStoreRefs: []esv1alpha1.PushSecretStoreRef{{Name: "vault", Kind: stores.KindSecretStore}},
			Selector:        esv1alpha1.PushSecretSelector{Secret: &esv1alpha1.PushSecretSecret{Name: "src"}},
			Data:            []esv1alpha1.PushSecretData{dataEntry("pw", "app/pw", "")},
		},
	}
	for _, m := range mutate {
		m(ps)
	}
	return ps
}

// held records that a store holds remote key of this PushSecret.
func held(ps *esv1alpha1.PushSecret, storeKey string, entries ...esv1alpha1.PushSecretData) {
	if ps.Status.SyncedPushSecrets == nil {
		ps.Status.SyncedPushSecrets = esv1alpha1.SyncedPushSecretsMap{}
	}
	m := map[string]esv1alpha1.PushSecretData{}
	for _, e := range entries {
		m[remoteID(e.Match.RemoteRef)] = e
	}
	ps.Status.SyncedPushSecrets[storeKey] = m
}

func storeKeys(ss []*pushStore) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.target.key())
	}
	return out
}

func heldIDs(h map[string]synced) map[string][]string {
	out := map[string][]string{}
	for k, s := range h {
		out[k] = slices.Sorted(maps.Keys(s))
	}
	return out
}

func names(secrets []corev1.Secret) []string {
	var out []string
	for _, s := range secrets {
		out = append(out, s.Name)
	}
	return out
}

func manySecrets(n int, labels map[string]string) []client.Object {
	var out []client.Object
	for i := range n {
		out = append(out, sourceSecret(fmt.Sprintf("s-%03d", i), map[string]string{fmt.Sprintf("k%d", i): "v"}, func(s *corev1.Secret) { s.Labels = labels }))
	}
	return out
}
