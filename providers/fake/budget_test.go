package fake

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// budget is a cluster of Fake configurations and a fresh push budget with
// a clock the test moves.
type budget struct {
	t     *testing.T
	c     client.Client
	p     plugin.Provider
	clock time.Time
}

func newBudget(t *testing.T) *budget {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{provv1.AddToScheme, v1stores.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	b := &budget{t: t, c: ctrlfake.NewClientBuilder().WithScheme(scheme).Build(), clock: time.Unix(1e9, 0)}
	b.p = Registration.NewProvider(plugin.Deps{Client: b.c, APIReader: b.c})
	saved := pushed
	pushed = newPushedSecrets()
	pushed.now = func() time.Time { return b.clock }
	t.Cleanup(func() { pushed = saved })
	return b
}

// config creates the Fake configuration namespace/name with uid.
func (b *budget) config(namespace, name, uid string) plugin.Writer {
	b.t.Helper()
	cfg := &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(uid)}}
	if err := b.c.Create(context.Background(), cfg); err != nil {
		b.t.Fatal(err)
	}
	return b.client(namespace, name)
}

func (b *budget) client(namespace, name string) plugin.Writer {
	b.t.Helper()
	c, err := b.p.NewClient(context.Background(), plugin.Ref{Kind: Kind, Namespace: namespace, Name: name}, plugin.Scope{Namespace: namespace})
	if err != nil {
		b.t.Fatal(err)
	}
	return c.(plugin.Writer)
}

func (b *budget) delete(namespace, name string) {
	b.t.Helper()
	if err := b.c.Delete(context.Background(), &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}); err != nil {
		b.t.Fatal(err)
	}
	b.clock = b.clock.Add(pruneEvery)
}

func push(w plugin.Writer, key string, size int) error {
	return w.PushSecret(context.Background(), plugin.PushRequest{RemoteKey: key, Value: make([]byte, size)})
}

// fill pushes maxPushedBytes into w, in 1 MiB values.
func fill(t *testing.T, w plugin.Writer, what string) {
	t.Helper()
	for i := range maxPushedBytes >> 20 {
		if err := push(w, fmt.Sprint("k", i), 1<<20); err != nil {
			t.Fatalf("%s: push %d within the bounds: %v", what, i, err)
		}
	}
}

// TestOneNamespaceCannotTakeTheWholeBudget: a namespace's configurations
// hold at most maxPushedBytesPerNamespace together, so that every other
// namespace still has room.
func TestOneNamespaceCannotTakeTheWholeBudget(t *testing.T) {
	b := newBudget(t)
	perNamespace := maxPushedBytesPerNamespace / maxPushedBytes
	for i := range perNamespace {
		fill(t, b.config("mallory", fmt.Sprint("f", i), fmt.Sprint("m", i)), "mallory")
	}
	extra := b.config("mallory", "one-more", "m-extra")
	if err := push(extra, "k", 1); !errors.Is(err, plugin.ErrTooLarge) {
		t.Fatalf("a push past the namespace's %d bytes: %v, want ErrTooLarge", maxPushedBytesPerNamespace, err)
	}
	if err := push(b.config("alice", "f", "a"), "k", 1<<20); err != nil {
		t.Errorf("another namespace cannot push once one namespace is full: %v", err)
	}
	if maxPushedBytesPerNamespace*2 > maxPushedBytesGlobal {
		t.Errorf("a namespace may take %d of %d bytes", maxPushedBytesPerNamespace, maxPushedBytesGlobal)
	}
}

// TestPushBudgetIsReleasedWithItsConfiguration: what a configuration
// pushed is released when the configuration goes (deleted, or replaced by
// one of the same name with another UID), so that the budget every
// namespace shares does not stay spent until eso restarts.
func TestPushBudgetIsReleasedWithItsConfiguration(t *testing.T) {
	b := newBudget(t)
	perNamespace := maxPushedBytesPerNamespace / maxPushedBytes
	namespaces := maxPushedBytesGlobal / maxPushedBytesPerNamespace
	for n := range namespaces {
		for i := range perNamespace {
			fill(t, b.config(fmt.Sprint("tenant", n), fmt.Sprint("f", i), fmt.Sprint(n, "-", i)), "tenants")
		}
	}
	victim := b.config("victim", "f", "v")
	if err := push(victim, "k", 1); !errors.Is(err, plugin.ErrTooLarge) {
		t.Fatalf("a push past the global %d bytes: %v, want ErrTooLarge", maxPushedBytesGlobal, err)
	}

	// Deleted: a sweep when room is needed releases it.
	b.delete("tenant0", "f0")
	if err := push(victim, "k", 1<<20); err != nil {
		t.Fatalf("a push once a full configuration is deleted: %v", err)
	}
	if pushed.total > maxPushedBytesGlobal {
		t.Errorf("%d bytes held", pushed.total)
	}

	// Replaced (deleted and created again, another UID): released as soon
	// as the new one is used, and the new one starts empty.
	b.delete("tenant1", "f0")
	again := b.config("tenant1", "f0", "1-0-again")
	if ok, _ := again.SecretExists(context.Background(), "k0"); ok {
		t.Error("a configuration created again sees what the old one pushed")
	}
	if err := push(victim, "k2", 1<<20); err != nil {
		t.Fatalf("a push once a full configuration is replaced: %v", err)
	}

	// A configuration still there keeps what it pushed.
	if ok, _ := b.client("tenant2", "f0").SecretExists(context.Background(), "k0"); !ok {
		t.Error("a sweep dropped what a configuration still there pushed")
	}
}

// TestInlineConfigurationLivesWithItsStore: a v1 store's inline Fake
// configuration is released with the store, and kept while the store is
// there, though no Fake object of its name exists.
func TestInlineConfigurationLivesWithItsStore(t *testing.T) {
	b := newBudget(t)
	store := &v1stores.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "fake", UID: "s"}}
	if err := b.c.Create(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	cfg := &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "fake", UID: "s",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1stores.GroupVersion.String(), Kind: "SecretStore", Name: "fake", UID: "s"}}}}
	c, err := b.p.(plugin.ConfigClients).NewClientFromConfig(context.Background(), cfg, plugin.Scope{Namespace: "team"})
	if err != nil {
		t.Fatal(err)
	}
	w := c.(plugin.Writer)
	for i := range maxPushedBytesPerNamespace / maxPushedBytes {
		if i == 0 {
			fill(t, w, "inline")
			continue
		}
		fill(t, b.config("team", fmt.Sprint("f", i), fmt.Sprint("t", i)), "team")
	}
	other := b.config("team", "other", "o")
	b.clock = b.clock.Add(pruneEvery)
	if err := push(other, "k", 1); !errors.Is(err, plugin.ErrTooLarge) {
		t.Fatalf("a push past the namespace's bytes: %v, want ErrTooLarge", err)
	}
	if ok, _ := w.SecretExists(context.Background(), "k0"); !ok {
		t.Fatal("a sweep dropped what a v1 store still there pushed")
	}
	if err := b.c.Delete(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	b.clock = b.clock.Add(pruneEvery)
	if err := push(other, "k", 1); err != nil {
		t.Fatalf("a push once the v1 store is deleted: %v", err)
	}
}

// TestOwnerReferencesOfFakeObjectsAreNotTrusted: a tenant's Fake object
// naming a v1 ClusterSecretStore as its owner is still a Fake object of
// the tenant's namespace: it neither replaces the store's inline
// configuration (releasing what that pushed) nor counts outside the
// tenant's namespace.
func TestOwnerReferencesOfFakeObjectsAreNotTrusted(t *testing.T) {
	b := newBudget(t)
	owner := []metav1.OwnerReference{{APIVersion: v1stores.GroupVersion.String(), Kind: "ClusterSecretStore", Name: "shared", UID: "css"}}
	store := &v1stores.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: "shared", UID: "css"}}
	if err := b.c.Create(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	inline := &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Name: "shared", UID: "css", OwnerReferences: owner}}
	c, err := b.p.(plugin.ConfigClients).NewClientFromConfig(context.Background(), inline, plugin.Scope{Namespace: "team"})
	if err != nil {
		t.Fatal(err)
	}
	if err := push(c.(plugin.Writer), "k", 10); err != nil {
		t.Fatal(err)
	}
	forged := &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "mallory", Name: "shared", UID: "forged", OwnerReferences: owner}}
	if err := b.c.Create(context.Background(), forged); err != nil {
		t.Fatal(err)
	}
	w := b.client("mallory", "shared")
	if ok, _ := c.(plugin.Writer).SecretExists(context.Background(), "k"); !ok {
		t.Fatal("a Fake object naming the store as its owner released what the store's inline configuration pushed")
	}
	for i := range maxPushedBytesPerNamespace / maxPushedBytes {
		if i == 0 {
			fill(t, w, "forged")
			continue
		}
		fill(t, b.config("mallory", fmt.Sprint("f", i), fmt.Sprint("m", i)), "mallory")
	}
	if err := push(b.config("mallory", "one-more", "m-extra"), "k", 1); !errors.Is(err, plugin.ErrTooLarge) {
		t.Errorf("the forged configuration's pushes were not counted in its namespace: %v", err)
	}
}
