package externalsecret

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genkinds "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/generation"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/refresh"
	"github.com/eso-dev/eso/app/secrettemplate"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/generators/password"
	"github.com/eso-dev/eso/providers/fake"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/tests/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// writeCounter counts every write a client sends to the API server.
type writeCounter struct {
	creates, updates, patches, deletes, statusWrites atomic.Int32
}

func (w *writeCounter) total() int32 {
	return w.creates.Load() + w.updates.Load() + w.patches.Load() + w.deletes.Load() + w.statusWrites.Load()
}

func (w *writeCounter) reset() {
	w.creates.Store(0)
	w.updates.Store(0)
	w.patches.Store(0)
	w.deletes.Store(0)
	w.statusWrites.Store(0)
}

func (w *writeCounter) client(c client.WithWatch) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			w.creates.Add(1)
			return c.Create(ctx, o, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			w.updates.Add(1)
			return c.Update(ctx, o, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			w.patches.Add(1)
			return c.Patch(ctx, o, p, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
			w.deletes.Add(1)
			return c.Delete(ctx, o, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			w.statusWrites.Add(1)
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
			w.statusWrites.Add(1)
			return c.SubResource(sub).Update(ctx, o, opts...)
		},
	})
}

// countingProvider counts logins (NewClient) and reads of the Fake provider.
type countingProvider struct {
	plugin.Provider
	logins, reads atomic.Int32
	// failing makes every read fail as an unreachable provider does.
	failing atomic.Bool
}

func (p *countingProvider) NewClient(ctx context.Context, ref plugin.Ref, scope plugin.Scope) (plugin.SecretsClient, error) {
	p.logins.Add(1)
	c, err := p.Provider.NewClient(ctx, ref, scope)
	if err != nil {
		return nil, err
	}
	return &countingClient{SecretsClient: c, reads: &p.reads, failing: &p.failing}, nil
}

type countingClient struct {
	plugin.SecretsClient
	reads   *atomic.Int32
	failing *atomic.Bool
}

func (c *countingClient) GetSecret(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	c.reads.Add(1)
	if c.failing.Load() {
		return nil, errors.New("dial tcp: connection refused")
	}
	return c.SecretsClient.GetSecret(ctx, ref)
}

type harness struct {
	r        *Reconciler
	writes   *writeCounter
	provider *countingProvider
	events   *record.FakeRecorder
	now      time.Time
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{writes: &writeCounter{}, events: record.NewFakeRecorder(100), now: time.Now()}
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	c := h.writes.client(wc)
	reg := fake.Registration
	reg.NewProvider = func(d plugin.Deps) plugin.Provider {
		h.provider = &countingProvider{Provider: fake.Registration.NewProvider(d)}
		return h.provider
	}
	catalog, err := plugin.NewIndex([]plugin.Registration{reg, password.Registration})
	if err != nil {
		t.Fatal(err)
	}
	provs := plugin.NewPlugins(catalog, plugin.Deps{Client: c, APIReader: c})
	h.r = &Reconciler{
		Client:    c,
		APIReader: c,
		Resolver:  stores.NewResolver(c, provs, stores.NewClientCache(), ""),
		Recorder:  h.events,
		Scheduler: refresh.NewScheduler(),
		Now:       func() time.Time { return h.now },
	}
	h.r.statusWrites.API = c
	h.r.Generation = &generation.Runner{Client: c, Resolver: generation.NewResolver(c, provs, ""),
		Signer: generation.NewSignerWithKey([]byte("a key for the states of this package's tests"))}
	return h
}

// staleCache makes the reconciler read cached for every ExternalSecret while
// the returned switch is on (it starts off): a cache lagging behind the API
// server, which the reconciler's reads past the cache still see.
func (h *harness) staleCache(cached *esv1.ExternalSecret) *atomic.Bool {
	var stale atomic.Bool
	h.r.Client = interceptor.NewClient(h.r.Client.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if o, ok := obj.(*esv1.ExternalSecret); ok && stale.Load() {
				cached.DeepCopyInto(o)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	return &stale
}

func (h *harness) reconcile(t *testing.T, es *esv1.ExternalSecret) {
	t.Helper()
	if _, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(es)}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
}

func drainEvents(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func fakeConfig(ns string, data ...provv1.FakeSecret) *provv1.Fake {
	return &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fake"}, Spec: provv1.FakeSpec{Data: data}}
}

func secretStore(ns string) *ssv2.SecretStore {
	return &ssv2.SecretStore{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "store"},
		Spec: ssv2.SecretStoreSpec{ProviderConfig: ssv2.ProviderConfig{
			ProviderRef: ssv2.ProviderRef{Kind: "Fake", Name: "fake"},
		}},
	}
}

func externalSecret(ns string) *esv1.ExternalSecret {
	return &esv1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		Spec: esv1.ExternalSecretSpec{
			SecretStoreRef:  &esv1.SecretStoreRef{Name: "store", Kind: "SecretStore"},
			RefreshInterval: &metav1.Duration{Duration: time.Hour},
			Data: []esv1.ExternalSecretData{
				{SecretKey: "password", RemoteRef: esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "password"}},
			},
		},
	}
}

func getSecret(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		t.Fatalf("reading Secret %s: %v", name, err)
	}
	return &s
}

func getES(t *testing.T, es *esv1.ExternalSecret) *esv1.ExternalSecret {
	t.Helper()
	var out esv1.ExternalSecret
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(es), &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// TestSyncWritesOnlyWhatChanged walks one ExternalSecret through its life and
// counts API writes, provider logins and provider reads at each step.
func TestSyncWritesOnlyWhatChanged(t *testing.T) {
	ns := env.Namespace(t, "writes", nil)
	const value = "s3cr3t-value-never-logged"
	h := newHarness(t)
	cfg := fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"` + value + `"}`})
	es := externalSecret(ns)
	create(t, cfg, secretStore(ns), es)

	// First sync: the Secret, the status, one Event.
	h.reconcile(t, es)
	if got := h.writes.total(); got > 2 || h.writes.creates.Load() != 1 || h.writes.statusWrites.Load() != 1 {
		t.Errorf("first sync: %d creates, %d status writes, %d total API writes; want 1 Secret create + 1 status write",
			h.writes.creates.Load(), h.writes.statusWrites.Load(), got)
	}
	if ev := drainEvents(h.events); len(ev) != 1 {
		t.Errorf("first sync emitted %d events, want 1: %v", len(ev), ev)
	}
	s := getSecret(t, ns, "app")
	if string(s.Data["password"]) != value {
		t.Fatalf("Secret data = %q", s.Data)
	}
	if s.Labels[esv1.LabelManaged] != "true" || s.Annotations[esv1.AnnotationDataHash] == "" || s.Annotations[esv1.AnnotationManagedBy] != "app" {
		t.Errorf("Secret lacks the managed label or data-hash annotation: %v %v", s.Labels, s.Annotations)
	}
	if ref := metav1.GetControllerOf(s); ref == nil || ref.Kind != "ExternalSecret" || ref.Name != "app" {
		t.Errorf("creationPolicy Owner: controller = %v", ref)
	}
	got := getES(t, es)
	if c := readyCondition(got); c == nil || c.Status != metav1.ConditionTrue || c.Reason != esv1.ReasonSecretSynced {
		t.Fatalf("Ready = %+v", c)
	}
	if !strings.HasPrefix(got.Status.SyncedResourceVersion, "1-") || got.Status.Binding.Name != "app" || got.Status.RefreshTime.IsZero() ||
		got.Status.ObservedGeneration != 1 {
		t.Errorf("status = %+v", got.Status)
	}

	// Nothing changed: no write, no event, not even a provider read.
	h.writes.reset()
	h.reconcile(t, es)
	if n := h.writes.total(); n != 0 {
		t.Errorf("reconcile with nothing changed made %d writes", n)
	}
	if ev := drainEvents(h.events); len(ev) != 0 {
		t.Errorf("reconcile with nothing changed emitted events: %v", ev)
	}
	if n := h.provider.reads.Load(); n != 1 {
		t.Errorf("provider reads = %d, want 1 (the refresh is not due)", n)
	}

	// Refresh due, provider unchanged: one read, no write, same client.
	h.now = h.now.Add(time.Hour + time.Second)
	h.reconcile(t, es)
	if n := h.writes.total(); n != 0 {
		t.Errorf("refresh that changed nothing made %d writes", n)
	}
	if n := h.provider.reads.Load(); n != 2 {
		t.Errorf("provider reads = %d, want 2", n)
	}
	if n := h.provider.logins.Load(); n != 1 {
		t.Errorf("provider logins = %d, want 1: the client must be reused while the store is unchanged", n)
	}

	// The configuration changes: a new client, one Secret update, one status write.
	h.writes.reset()
	patch := client.MergeFrom(cfg.DeepCopy())
	cfg.Spec.Data[0].Value = `{"password":"rotated"}`
	if err := env.Client.Patch(context.Background(), cfg, patch); err != nil {
		t.Fatal(err)
	}
	h.reconcile(t, es)
	if h.writes.updates.Load() != 1 || h.writes.statusWrites.Load() != 1 || h.writes.total() != 2 {
		t.Errorf("rotation: %d updates, %d status writes, %d total; want 1, 1, 2", h.writes.updates.Load(), h.writes.statusWrites.Load(), h.writes.total())
	}
	if n := h.provider.logins.Load(); n != 2 {
		t.Errorf("provider logins = %d, want 2 after the configuration changed", n)
	}
	if s := getSecret(t, ns, "app"); string(s.Data["password"]) != "rotated" {
		t.Errorf("Secret not rotated: %q", s.Data)
	}
	drainEvents(h.events)

	// The provider loses the secret: the target keeps its data, the error names
	// the key but never a value.
	before := getSecret(t, ns, "app")
	h.writes.reset()
	patch = client.MergeFrom(cfg.DeepCopy())
	cfg.Spec.Data[0].Key = "renamed"
	if err := env.Client.Patch(context.Background(), cfg, patch); err != nil {
		t.Fatal(err)
	}
	h.reconcile(t, es)
	after := getSecret(t, ns, "app")
	if after.ResourceVersion != before.ResourceVersion || string(after.Data["password"]) != "rotated" {
		t.Errorf("provider failure changed the target Secret: %q", after.Data)
	}
	if h.writes.creates.Load()+h.writes.updates.Load()+h.writes.deletes.Load() != 0 {
		t.Errorf("provider failure wrote the Secret")
	}
	got = getES(t, es)
	c := syncedCondition(got)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != esv1.ReasonSecretNotFound || !strings.Contains(c.Message, `"db"`) {
		t.Errorf("Synced after provider failure = %+v", c)
	}
	if r := readyCondition(got); r == nil || r.Status != metav1.ConditionFalse || r.Reason != esv1.ReasonSecretSyncedError || r.Message != c.Message {
		t.Errorf("Ready after provider failure = %+v; want upstream's SecretSyncedError with the same message", r)
	}
	events := drainEvents(h.events)
	for _, text := range append(events, c.Message) {
		if strings.Contains(text, value) || strings.Contains(text, "rotated") {
			t.Errorf("secret value leaked into status or event: %q", text)
		}
	}
	if len(events) != 1 {
		t.Errorf("failure emitted %d events, want 1: %v", len(events), events)
	}

	// The same failure again: no status write, no event.
	h.writes.reset()
	if _, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(es)}); err != nil {
		t.Fatal(err)
	}
	if n := h.writes.total(); n != 0 {
		t.Errorf("repeated failure made %d writes", n)
	}
	if ev := drainEvents(h.events); len(ev) != 0 {
		t.Errorf("repeated failure emitted events: %v", ev)
	}
}

// TestDeletionPolicyDelete: a missing property never deletes; a vanished
// secret deletes once; the deleted state then costs no writes per refresh.
func TestDeletionPolicyDelete(t *testing.T) {
	ns := env.Namespace(t, "deletion", nil)
	ctx := context.Background()
	h := newHarness(t)
	cfg := fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"pw"}`})
	es := externalSecret(ns)
	es.Spec.Target.DeletionPolicy = esv1.DeletionPolicyDelete
	create(t, cfg, secretStore(ns), es)
	h.reconcile(t, es)
	getSecret(t, ns, "app")

	// The secret is still there but lost its property: an error, no deletion.
	patch := client.MergeFrom(cfg.DeepCopy())
	cfg.Spec.Data[0].Value = `{"user":"u"}`
	if err := env.Client.Patch(ctx, cfg, patch); err != nil {
		t.Fatal(err)
	}
	h.reconcile(t, es)
	getSecret(t, ns, "app")
	if c := syncedCondition(getES(t, es)); c.Reason != esv1.ReasonSecretNotFound {
		t.Errorf("missing property: Ready = %+v", c)
	}

	// The secret itself is gone: the target is deleted.
	patch = client.MergeFrom(cfg.DeepCopy())
	cfg.Spec.Data = nil
	if err := env.Client.Patch(ctx, cfg, patch); err != nil {
		t.Fatal(err)
	}
	h.reconcile(t, es)
	var s corev1.Secret
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app"}, &s); err == nil {
		t.Fatal("target Secret still exists after its remote secret was deleted")
	}
	// As upstream (markAsDone): a deletion the policy asked for is healthy,
	// so GitOps tools reading Ready do not report it as a failure.
	if c := readyCondition(getES(t, es)); c.Status != metav1.ConditionTrue || c.Reason != esv1.ReasonSecretDeleted {
		t.Errorf("Ready = %+v, want True/SecretDeleted", c)
	}

	// Later refreshes find the same: no writes.
	h.writes.reset()
	h.now = h.now.Add(2 * time.Hour)
	h.reconcile(t, es)
	if n := h.writes.total(); n != 0 {
		t.Errorf("refresh of a deleted ExternalSecret made %d writes", n)
	}
}

// TestAnnotationChangeResyncs: as with upstream's force-sync annotation, an
// annotation change reads the provider again before the refresh is due.
func TestAnnotationChangeResyncs(t *testing.T) {
	ns := env.Namespace(t, "forcesync", nil)
	h := newHarness(t)
	es := externalSecret(ns)
	create(t, fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"pw"}`}), secretStore(ns), es)
	h.reconcile(t, es)
	h.reconcile(t, es)
	if n := h.provider.reads.Load(); n != 1 {
		t.Fatalf("provider reads = %d, want 1", n)
	}
	patch := client.MergeFrom(es.DeepCopy())
	es.Annotations = map[string]string{"force-sync": time.Now().String()}
	if err := env.Client.Patch(context.Background(), es, patch); err != nil {
		t.Fatal(err)
	}
	h.reconcile(t, es)
	if n := h.provider.reads.Load(); n != 2 {
		t.Errorf("provider reads after force-sync = %d, want 2", n)
	}
}

// TestMetadataFollowsTheExternalSecret: without a template the Secret
// carries the ExternalSecret's labels and annotations, as upstream; one
// dropped from the ExternalSecret leaves the Secret, while those someone
// else set stay; eso's own marks cannot be set this way.
func TestMetadataFollowsTheExternalSecret(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t, "metadata", nil)
	h := newHarness(t)
	es := externalSecret(ns)
	es.Labels = map[string]string{"team": "a", "tier": "db"}
	es.Annotations = map[string]string{"owner": "alice", esv1.AnnotationManagedBy: "forged", "generator.external-secrets.io/states": "forged"}
	create(t, fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"pw"}`}), secretStore(ns), es)
	h.reconcile(t, es)
	s := getSecret(t, ns, "app")
	if s.Labels["team"] != "a" || s.Labels["tier"] != "db" || s.Annotations["owner"] != "alice" {
		t.Fatalf("Secret metadata %v %v; want the ExternalSecret's", s.Labels, s.Annotations)
	}
	if s.Annotations[esv1.AnnotationManagedBy] != es.Name {
		t.Errorf("an ExternalSecret annotation overrode eso's mark: %q", s.Annotations[esv1.AnnotationManagedBy])
	}
	if _, ok := s.Annotations["generator.external-secrets.io/states"]; ok {
		t.Errorf("an ExternalSecret annotation listed generator states on its Secret")
	}
	// Someone else labels the Secret; the ExternalSecret drops a label.
	patch := client.MergeFrom(s.DeepCopy())
	s.Labels["other"] = "kept"
	if err := env.Client.Patch(ctx, s, patch); err != nil {
		t.Fatal(err)
	}
	es = getES(t, es)
	patch = client.MergeFrom(es.DeepCopy())
	delete(es.Labels, "tier")
	es.Labels["team"] = "b"
	if err := env.Client.Patch(ctx, es, patch); err != nil {
		t.Fatal(err)
	}
	h.reconcile(t, es)
	s = getSecret(t, ns, "app")
	if _, ok := s.Labels["tier"]; ok || s.Labels["team"] != "b" || s.Labels["other"] != "kept" {
		t.Errorf("Secret labels %v; want tier removed, team updated, other kept", s.Labels)
	}
}

// TestTemplateFinalizers: template.metadata.finalizers are added to the
// Secret, as upstream.
func TestTemplateFinalizers(t *testing.T) {
	ns := env.Namespace(t, "finalizers", nil)
	h := newHarness(t)
	es := externalSecret(ns)
	es.Spec.Target.Template = &esv1.ExternalSecretTemplate{Metadata: esv1.ExternalSecretTemplateMetadata{Finalizers: []string{"example.com/keep"}}}
	create(t, fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"pw"}`}), secretStore(ns), es)
	h.reconcile(t, es)
	s := getSecret(t, ns, "app")
	if !slices.Contains(s.Finalizers, "example.com/keep") {
		t.Errorf("Secret finalizers %v", s.Finalizers)
	}
	// Let the namespace go.
	s.Finalizers = nil
	if err := env.Client.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// TestRefreshPolicies: OnChange reads the provider only when the
// ExternalSecret changes; CreatedOnce only to create its Secret.
func TestRefreshPolicies(t *testing.T) {
	ctx := context.Background()
	for _, policy := range []esv1.RefreshPolicy{esv1.RefreshPolicyOnChange, esv1.RefreshPolicyCreatedOnce} {
		t.Run(string(policy), func(t *testing.T) {
			ns := env.Namespace(t, "policy", nil)
			h := newHarness(t)
			cfg := fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"one"}`})
			es := externalSecret(ns)
			es.Spec.RefreshPolicy = policy
			create(t, cfg, secretStore(ns), es)
			h.reconcile(t, es)

			h.now = h.now.Add(48 * time.Hour)
			h.reconcile(t, es)
			if n := h.provider.reads.Load(); n != 1 {
				t.Errorf("provider reads after two days = %d, want 1: %s never refreshes", n, policy)
			}

			patch := client.MergeFrom(es.DeepCopy())
			es.Annotations = map[string]string{"force-sync": "1"}
			if err := env.Client.Patch(ctx, es, patch); err != nil {
				t.Fatal(err)
			}
			h.reconcile(t, es)
			want := int32(2)
			if policy == esv1.RefreshPolicyCreatedOnce {
				want = 1
			}
			if n := h.provider.reads.Load(); n != want {
				t.Errorf("provider reads after an edit = %d, want %d", n, want)
			}

			if err := env.Client.Delete(ctx, getSecret(t, ns, "app")); err != nil {
				t.Fatal(err)
			}
			h.reconcile(t, es)
			if s := getSecret(t, ns, "app"); string(s.Data["password"]) != "one" {
				t.Errorf("deleted Secret not recreated: %q", s.Data)
			}
		})
	}
}

func TestJitterIsBoundedAndStable(t *testing.T) {
	es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{UID: "0b6f7a6e-1"}}
	for _, interval := range []time.Duration{time.Second, time.Minute, time.Hour, 24 * time.Hour} {
		j := jitter(es, interval)
		if j < 0 || j >= min(interval/10, time.Minute) || j != jitter(es, interval) {
			t.Errorf("jitter(%v) = %v", interval, j)
		}
	}
	spread := map[time.Duration]bool{}
	for i := range 100 {
		spread[jitter(&esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{UID: types.UID(fmt.Sprint(i))}}, time.Hour)] = true
	}
	if len(spread) < 90 {
		t.Errorf("100 objects got only %d distinct jitters", len(spread))
	}
}

// TestSyncWindowDefersRefreshes: a deny window holds periodic refreshes back,
// but not the first sync of a new ExternalSecret.
func TestSyncWindowDefersRefreshes(t *testing.T) {
	ns := env.Namespace(t, "windows", nil)
	h := newHarness(t)
	es := externalSecret(ns)
	es.Spec.SyncWindows = &esv1.SyncWindows{Kind: esv1.SyncWindowDeny, Windows: []esv1.SyncWindow{{Schedule: "* * * * *", Duration: metav1.Duration{Duration: 24 * time.Hour}}}}
	create(t, fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"pw"}`}), secretStore(ns), es)
	h.reconcile(t, es)
	getSecret(t, ns, "app") // created despite the window
	h.now = h.now.Add(2 * time.Hour)
	h.reconcile(t, es)
	if n := h.provider.reads.Load(); n != 1 {
		t.Errorf("provider reads = %d, want 1: the deny window holds the refresh", n)
	}
}

// TestDeletionPolicyMerge: a merging ExternalSecret removes exactly the keys
// it wrote (when it stops producing them, and when its remote secrets go),
// leaving the Secret and its other keys alone; an owning one empties its Secret.
func TestDeletionPolicyMerge(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t, "delmerge", nil)
	h := newHarness(t)
	cfg := fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"pw"}`})
	shared := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared"}, Data: map[string][]byte{"mine": []byte("kept")}}
	merging := externalSecret(ns)
	merging.Spec.Target = esv1.ExternalSecretTarget{Name: "shared", CreationPolicy: esv1.CreatePolicyMerge, DeletionPolicy: esv1.DeletionPolicyMerge}
	owning := externalSecret(ns)
	owning.Name = "owning"
	owning.Spec.Target.DeletionPolicy = esv1.DeletionPolicyMerge
	create(t, cfg, secretStore(ns), shared, merging, owning)
	h.reconcile(t, merging)
	h.reconcile(t, owning)
	if s := getSecret(t, ns, "shared"); string(s.Data["password"]) != "pw" || string(s.Data["mine"]) != "kept" {
		t.Fatalf("merge: %q", s.Data)
	}

	// The ExternalSecret now writes the value under another key: the old one goes.
	patch := client.MergeFrom(merging.DeepCopy())
	merging.Spec.Data[0].SecretKey = "pw"
	if err := env.Client.Patch(ctx, merging, patch); err != nil {
		t.Fatal(err)
	}
	h.reconcile(t, merging)
	if s := getSecret(t, ns, "shared"); len(s.Data) != 2 || string(s.Data["pw"]) != "pw" || string(s.Data["mine"]) != "kept" {
		t.Fatalf("after renaming the key: %q", s.Data)
	}

	// The remote secret goes: its keys leave, the Secrets stay.
	patch = client.MergeFrom(cfg.DeepCopy())
	cfg.Spec.Data = nil
	if err := env.Client.Patch(ctx, cfg, patch); err != nil {
		t.Fatal(err)
	}
	h.reconcile(t, merging)
	h.reconcile(t, owning)
	if s := getSecret(t, ns, "shared"); len(s.Data) != 1 || string(s.Data["mine"]) != "kept" {
		t.Errorf("shared Secret after deletion: %q", s.Data)
	}
	if s := getSecret(t, ns, "owning"); len(s.Data) != 0 {
		t.Errorf("owned Secret after deletion: %q, want no data", s.Data)
	}
	// As upstream: a Merge deletion is a sync (Ready=True, SecretSynced);
	// Synced says what happened.
	for _, es := range []*esv1.ExternalSecret{merging, owning} {
		got := getES(t, es)
		if c := readyCondition(got); c.Status != metav1.ConditionTrue || c.Reason != esv1.ReasonSecretSynced {
			t.Errorf("%s: Ready = %+v", es.Name, c)
		}
		if c := syncedCondition(got); c.Reason != esv1.ReasonSecretDeleted {
			t.Errorf("%s: Synced = %+v", es.Name, c)
		}
	}
}

// TestEditNothingSyncsIsAcknowledged: an edit of an ExternalSecret whose
// refresh policy does not act on it (CreatedOnce, refreshInterval 0) reads
// nothing and writes the status once, acknowledging the generation, so
// kstatus reads the healthy ExternalSecret as Current rather than
// InProgress for ever; reconciling it again writes nothing.
func TestEditNothingSyncsIsAcknowledged(t *testing.T) {
	ctx := context.Background()
	for name, mutate := range map[string]func(*esv1.ExternalSecret){
		"created once":       func(es *esv1.ExternalSecret) { es.Spec.RefreshPolicy = esv1.RefreshPolicyCreatedOnce },
		"refresh interval 0": func(es *esv1.ExternalSecret) { es.Spec.RefreshInterval = &metav1.Duration{} },
	} {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t, "ack", nil)
			h := newHarness(t)
			es := externalSecret(ns)
			mutate(es)
			create(t, fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"pw","user":"u"}`}), secretStore(ns), es)
			h.reconcile(t, es)
			got := getES(t, es)
			if got.Status.ObservedGeneration != 1 {
				t.Fatalf("after the first sync: status.observedGeneration %d, want 1", got.Status.ObservedGeneration)
			}

			patch := client.MergeFrom(got.DeepCopy())
			got.Spec.Data = append(got.Spec.Data, esv1.ExternalSecretData{SecretKey: "user", RemoteRef: esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "user"}})
			if err := env.Client.Patch(ctx, got, patch); err != nil {
				t.Fatal(err)
			}
			if res := kstatusOf(t, getES(t, es)); res.Status != kstatus.InProgressStatus {
				t.Errorf("kstatus before eso looked at the edit: %s (%s), want InProgress", res.Status, res.Message)
			}
			h.writes.reset()
			h.reconcile(t, es)
			if n, all := h.writes.statusWrites.Load(), h.writes.total(); n != 1 || all != 1 {
				t.Errorf("the edit: %d status writes, %d writes in all; want 1 and 1", n, all)
			}
			if n := h.provider.reads.Load(); n != 1 {
				t.Errorf("provider reads = %d, want 1: the edit is not synced", n)
			}
			got = getES(t, es)
			if got.Generation != 2 || got.Status.ObservedGeneration != 2 {
				t.Errorf("generation %d, status.observedGeneration %d; want 2 and 2", got.Generation, got.Status.ObservedGeneration)
			}
			if c := readyCondition(got); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != 2 {
				t.Errorf("Ready = %+v, want True at generation 2", c)
			}
			if res := kstatusOf(t, got); res.Status != kstatus.CurrentStatus {
				t.Errorf("kstatus: %s (%s), want Current", res.Status, res.Message)
			}
			if s := getSecret(t, ns, "app"); len(s.Data) != 1 {
				t.Errorf("the Secret was written: %q", s.Data)
			}

			h.writes.reset()
			h.now = h.now.Add(48 * time.Hour)
			h.reconcile(t, es)
			if n := h.writes.total(); n != 0 {
				t.Errorf("reconciling the acknowledged ExternalSecret again made %d writes", n)
			}
		})
	}
}

// TestObservedGenerationCostsNoWrite: a status an earlier eso wrote, without
// status.observedGeneration, gains it with its next change; a refresh that
// changes nothing writes nothing for it alone, after a restart too.
func TestObservedGenerationCostsNoWrite(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t, "observed", nil)
	h := newHarness(t)
	cfg := fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"pw"}`})
	es := externalSecret(ns)
	create(t, cfg, secretStore(ns), es)
	h.reconcile(t, es)
	if err := env.Client.Status().Patch(ctx, getES(t, es), client.RawPatch(types.MergePatchType, []byte(`{"status":{"observedGeneration":null}}`))); err != nil {
		t.Fatal(err)
	}
	if got := getES(t, es); got.Status.ObservedGeneration != 0 {
		t.Fatalf("status.observedGeneration %d, want none", got.Status.ObservedGeneration)
	}

	// Restarted, with the refresh due: the provider is read, nothing changed.
	h = newHarness(t)
	h.now = h.now.Add(2 * time.Hour)
	h.reconcile(t, es)
	if n := h.provider.reads.Load(); n != 1 {
		t.Fatalf("provider reads = %d, want 1", n)
	}
	if n := h.writes.total(); n != 0 {
		t.Errorf("a refresh that changed nothing made %d writes", n)
	}
	if got := getES(t, es); got.Status.ObservedGeneration != 0 {
		t.Errorf("status.observedGeneration %d written alone", got.Status.ObservedGeneration)
	}

	// The next change brings it.
	patch := client.MergeFrom(cfg.DeepCopy())
	cfg.Spec.Data[0].Value = `{"password":"rotated"}`
	if err := env.Client.Patch(ctx, cfg, patch); err != nil {
		t.Fatal(err)
	}
	h.reconcile(t, es)
	if got := getES(t, es); got.Status.ObservedGeneration != got.Generation {
		t.Errorf("after a change: status.observedGeneration %d, want %d", got.Status.ObservedGeneration, got.Generation)
	}
}

// TestCreatedOnceMergesOnce: with creationPolicy Merge the target exists
// before the first sync; CreatedOnce still syncs once, then never again.
func TestCreatedOnceMergesOnce(t *testing.T) {
	ns := env.Namespace(t, "once-merge", nil)
	h := newHarness(t)
	es := externalSecret(ns)
	es.Spec.RefreshPolicy = esv1.RefreshPolicyCreatedOnce
	es.Spec.Target = esv1.ExternalSecretTarget{Name: "shared", CreationPolicy: esv1.CreatePolicyMerge}
	create(t, fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"pw"}`}), secretStore(ns),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared"}, Data: map[string][]byte{"mine": []byte("x")}}, es)
	h.reconcile(t, es)
	if s := getSecret(t, ns, "shared"); string(s.Data["password"]) != "pw" {
		t.Fatalf("first sync did not merge: %q", s.Data)
	}
	h.now = h.now.Add(48 * time.Hour)
	h.reconcile(t, es)
	if n := h.provider.reads.Load(); n != 1 {
		t.Errorf("provider reads = %d, want 1", n)
	}
}

// TestOrphanDelete: deletionPolicy Delete also removes a Secret eso wrote
// whole without owning it (creationPolicy Orphan), and only that one.
func TestOrphanDelete(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t, "orphan-delete", nil)
	h := newHarness(t)
	cfg := fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"pw"}`})
	es := externalSecret(ns)
	es.Spec.Target = esv1.ExternalSecretTarget{CreationPolicy: esv1.CreatePolicyOrphan, DeletionPolicy: esv1.DeletionPolicyDelete}
	create(t, cfg, secretStore(ns), es)
	h.reconcile(t, es)
	getSecret(t, ns, "app")
	patch := client.MergeFrom(cfg.DeepCopy())
	cfg.Spec.Data = nil
	if err := env.Client.Patch(ctx, cfg, patch); err != nil {
		t.Fatal(err)
	}
	h.reconcile(t, es)
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app"}, &corev1.Secret{}); err == nil {
		t.Error("the orphaned Secret eso wrote was not deleted")
	}
}

// TestNoMergeIntoCredentialSecrets: Merge refuses Secret types Kubernetes
// fills with credentials.
func TestNoMergeIntoCredentialSecrets(t *testing.T) {
	es := externalSecret("ns")
	es.Spec.Target.CreationPolicy = esv1.CreatePolicyMerge
	target := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Type: corev1.SecretTypeServiceAccountToken}
	if err := checkTarget(es, target); err == nil || !strings.Contains(err.Error(), "fills with credentials") {
		t.Errorf("checkTarget = %v", err)
	}
}

// TestNeverWritesCredentialSecretTypes: whatever the schema let through
// (an object stored before its rule), eso writes no Secret of a type
// Kubernetes would fill with a ServiceAccount's token, on create or update.
func TestNeverWritesCredentialSecretTypes(t *testing.T) {
	r := &Reconciler{} // refused before any API call
	for _, typ := range []corev1.SecretType{corev1.SecretTypeServiceAccountToken, corev1.SecretTypeBootstrapToken} {
		for _, target := range []*corev1.Secret{nil, {ObjectMeta: metav1.ObjectMeta{Name: "app"}, Type: corev1.SecretTypeOpaque}} {
			es := externalSecret("ns")
			wrote, err := r.writeTarget(context.Background(), es, target, &secrettemplate.Result{Type: typ,
				Annotations: map[string]string{corev1.ServiceAccountNameKey: "admin"}})
			if retry := outcome(err).SyncRetry; wrote || !errors.Is(err, errCredentialType) || retry != outcomes.Wait {
				t.Errorf("type %s, existing target %v: wrote %v, %v (retry %v, want Wait)", typ, target != nil, wrote, err, retry)
			}
		}
	}
}

// TestCachingPolicy: with cachingPolicy All a refresh within the TTL is served
// from memory; with None every sync logs in again.
func TestCachingPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy        ssv2.CachingPolicy
		reads, logins int32
	}{
		{ssv2.CachingAll, 1, 1},
		{ssv2.CachingNone, 2, 2},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			ns := env.Namespace(t, "caching", nil)
			h := newHarness(t)
			store := secretStore(ns)
			store.Spec.CachingPolicy = tc.policy
			if tc.policy == ssv2.CachingAll {
				store.Spec.CacheConfig = &ssv2.CacheConfig{TTL: metav1.Duration{Duration: 3 * time.Hour}, MaxEntries: 10}
			}
			es := externalSecret(ns)
			create(t, fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"pw"}`}), store, es)
			h.reconcile(t, es)
			h.now = h.now.Add(time.Hour + time.Minute) // refresh due, still within the TTL
			h.reconcile(t, es)
			if r, l := h.provider.reads.Load(), h.provider.logins.Load(); r != tc.reads || l != tc.logins {
				t.Errorf("provider reads %d, logins %d; want %d, %d", r, l, tc.reads, tc.logins)
			}
		})
	}
}

// TestRenamedTargetIsDeleted: as upstream, an Owner ExternalSecret whose
// target is renamed deletes the Secret it wrote under the old name once the
// new one is written; an Orphan one leaves it.
func TestRenamedTargetIsDeleted(t *testing.T) {
	ctx := context.Background()
	for _, policy := range []esv1.CreationPolicy{esv1.CreatePolicyOwner, esv1.CreatePolicyOrphan} {
		t.Run(string(policy), func(t *testing.T) {
			ns := env.Namespace(t, "rename", nil)
			h := newHarness(t)
			es := externalSecret(ns)
			es.Spec.Target.CreationPolicy = policy
			create(t, fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"pw"}`}), secretStore(ns), es)
			h.reconcile(t, es)
			old := es.TargetName()
			getSecret(t, ns, old)
			es = getES(t, es)
			patch := client.MergeFrom(es.DeepCopy())
			es.Spec.Target.Name = "renamed"
			if err := env.Client.Patch(ctx, es, patch); err != nil {
				t.Fatal(err)
			}
			h.reconcile(t, es)
			getSecret(t, ns, "renamed")
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: old}, &corev1.Secret{})
			if gone := apierrors.IsNotFound(err); gone != (policy == esv1.CreatePolicyOwner) {
				t.Errorf("old target gone = %v (%v), want %v", gone, err, policy == esv1.CreatePolicyOwner)
			}
		})
	}
}

// TestTakeOverRefreshes: with --shards auto, a replica that takes a
// namespace over refreshes its ExternalSecrets that last refreshed before
// that, once; a replica that merely restarts lets the status stand in.
func TestTakeOverRefreshes(t *testing.T) {
	ns := env.Namespace(t, "takeover", nil)
	first := newHarness(t)
	create(t, fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"one"}`}), secretStore(ns), externalSecret(ns))
	es := externalSecret(ns)
	first.reconcile(t, es)

	reads := func(h *harness) int32 {
		if h.provider == nil {
			return 0
		}
		return h.provider.reads.Load()
	}
	next := newHarness(t)
	next.now = first.now.Add(time.Minute) // within the hour's refresh interval
	next.reconcile(t, es)
	if n := reads(next); n != 0 {
		t.Fatalf("a replica starting read the provider %d times; the status stands in", n)
	}
	next.r.tookOver([]string{ns})
	next.reconcile(t, es)
	next.reconcile(t, es)
	if n := reads(next); n != 1 {
		t.Errorf("after taking the namespace over, %d provider reads, want 1", n)
	}
}

// TestRecoveryOverAStaleCache: a retry after a failure can read the
// ExternalSecret from a cache that does not show the failure's status
// write yet. From that copy the recovery's status differs from the one
// read only in what the failure did not touch, so a patch from it would
// leave the failure's Ready=False on the API server until the next
// refresh. The retry reads the object from the API server instead.
func TestRecoveryOverAStaleCache(t *testing.T) {
	ns := env.Namespace(t, "stale", nil)
	h := newHarness(t)
	es := externalSecret(ns)
	create(t, fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"pw"}`}), secretStore(ns), es)
	h.reconcile(t, es)

	// An edit asks for a sync, which fails. The cache sees the edit but
	// not the failure's status write.
	edited := getES(t, es)
	edited.Annotations = map[string]string{esv1.AnnotationForceSync: "1"}
	if err := env.Client.Update(context.Background(), edited); err != nil {
		t.Fatal(err)
	}
	cachedCopy := getES(t, es)
	stale := h.staleCache(cachedCopy)
	h.provider.failing.Store(true)
	if _, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(es)}); err == nil {
		t.Fatal("a failing provider: want the reconcile to fail")
	}
	if c := readyCondition(getES(t, es)); c == nil || c.Status != metav1.ConditionFalse {
		t.Fatalf("after the failure Ready = %+v, want False", c)
	}

	// The provider is back; the retry reads the cache's copy.
	stale.Store(true)
	h.provider.failing.Store(false)
	h.reconcile(t, es)
	if c := readyCondition(getES(t, es)); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("after the recovery Ready = %+v, want True", c)
	}
}

// TestRotationOverAStaleCache: a force-sync of a generating ExternalSecret
// read from a cache that shows the annotation but not the last sync's status
// write still rotates. From that copy the rotation just written looks like
// the one the force-sync asks for (generation.Intent reads
// status.refreshTime), so without reading its own write the controller
// would record it again and generate nothing.
func TestRotationOverAStaleCache(t *testing.T) {
	ns := env.Namespace(t, "stale-rotation", nil)
	h := newHarness(t)
	es := &esv1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		Spec: esv1.ExternalSecretSpec{
			RefreshInterval: &metav1.Duration{Duration: time.Hour},
			DataFrom: []esv1.ExternalSecretDataFromRemoteRef{{SourceRef: &esv1.StoreGeneratorSourceRef{
				GeneratorRef: &esv1.GeneratorRef{APIVersion: generation.KindsAPIVersion, Kind: "Password", Name: "pw"}}}},
		},
	}
	create(t, &genkinds.Password{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pw"},
		Spec: genkinds.PasswordSpec{Length: 24, Digits: ptr.To(4), Symbols: ptr.To(0)}}, es)
	unsynced := getES(t, es)
	h.reconcile(t, es)
	first := getSecret(t, ns, "app").Data["password"]
	if len(first) != 24 {
		t.Fatalf("after the first sync the Secret holds a %d-byte password, want 24", len(first))
	}

	// The force-sync reaches the cache before the first sync's status write.
	annotated := getES(t, es)
	annotated.Annotations = map[string]string{esv1.AnnotationForceSync: "1"}
	if err := env.Client.Update(context.Background(), annotated); err != nil {
		t.Fatal(err)
	}
	cachedCopy := getES(t, es)
	cachedCopy.Status = unsynced.Status
	h.staleCache(cachedCopy).Store(true)
	h.now = h.now.Add(time.Second)
	h.reconcile(t, es)
	if second := getSecret(t, ns, "app").Data["password"]; string(second) == string(first) {
		t.Fatal("the force-sync generated no new password")
	}
}
