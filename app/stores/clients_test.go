package stores

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

type stubClient struct{ closed atomic.Bool }

func (c *stubClient) GetSecret(context.Context, esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	return nil, nil
}
func (c *stubClient) GetSecretMap(context.Context, esv1.ExternalSecretDataRemoteRef) (map[string][]byte, error) {
	return nil, nil
}
func (c *stubClient) GetAllSecrets(context.Context, esv1.ExternalSecretFind) (map[string][]byte, error) {
	return nil, nil
}
func (c *stubClient) Capabilities() plugin.Capabilities { return plugin.ReadOnly }
func (c *stubClient) Close(context.Context) error       { c.closed.Store(true); return nil }

func TestClientCacheReusesUntilFingerprintChanges(t *testing.T) {
	ctx := context.Background()
	cache := NewClientCache()
	key := clientKey{storeKind: KindSecretStore, storeNamespace: "ns", storeName: "s", scope: plugin.Scope{Namespace: "ns"}}
	var builds atomic.Int32
	build := func(context.Context) (plugin.SecretsClient, error) {
		builds.Add(1)
		return &stubClient{}, nil
	}

	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, release, err := cache.Get(ctx, key, "v1", build)
			if err != nil {
				t.Error(err)
				return
			}
			release()
		}()
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Fatalf("20 concurrent Gets built %d clients, want 1", n)
	}

	first, releaseFirst, _ := cache.Get(ctx, key, "v1", build)
	_, releaseOther, _ := cache.Get(ctx, key, "v1", build) // a second sync on the same client
	second, releaseSecond, _ := cache.Get(ctx, key, "v2", build)
	if first == second {
		t.Fatal("a changed fingerprint must replace the client")
	}
	releaseFirst()
	releaseFirst() // a second call must not release the other sync's use
	if first.(*stubClient).closed.Load() {
		t.Fatal("the replaced client was closed while a sync still used it")
	}
	releaseOther()
	if !first.(*stubClient).closed.Load() {
		t.Fatal("the replaced client was not closed when its last user released it")
	}

	cache.Forget(ctx, KindSecretStore, "ns", "s")
	if second.(*stubClient).closed.Load() || cache.Len() != 0 {
		t.Fatal("Forget must drop the store's clients but close them only when unused")
	}
	releaseSecond()
	if !second.(*stubClient).closed.Load() {
		t.Fatal("a forgotten client was not closed when its last user released it")
	}
	third, release, _ := cache.Get(ctx, key, "v2", build)
	release()
	if third == second || third.(*stubClient).closed.Load() {
		t.Fatal("after Forget a new client must be built, and kept open while cached")
	}
}

func TestForgetScopeDropsOnlyClusterClientsOfTheNamespace(t *testing.T) {
	ctx := context.Background()
	cache := NewClientCache()
	build := func(context.Context) (plugin.SecretsClient, error) { return &stubClient{}, nil }
	tenant := clientKey{storeKind: KindClusterSecretStore, storeName: "shared", scope: plugin.Scope{Namespace: "tenant"}}
	other := clientKey{storeKind: KindClusterSecretStore, storeName: "shared", scope: plugin.Scope{Namespace: "other"}}
	own := clientKey{storeKind: KindSecretStore, storeNamespace: "tenant", storeName: "s", scope: plugin.Scope{Namespace: "tenant"}}
	clients := map[clientKey]plugin.SecretsClient{}
	for _, k := range []clientKey{tenant, other, own} {
		cl, release, err := cache.Get(ctx, k, "v1", build)
		if err != nil {
			t.Fatal(err)
		}
		release()
		clients[k] = cl
	}
	cache.ForgetScope(ctx, "tenant")
	if !clients[tenant].(*stubClient).closed.Load() {
		t.Fatal("the cluster store's client for the namespace was kept")
	}
	if clients[other].(*stubClient).closed.Load() || clients[own].(*stubClient).closed.Load() || cache.Len() != 2 {
		t.Fatal("ForgetScope dropped clients of other namespaces or of the namespace's own store")
	}
}
