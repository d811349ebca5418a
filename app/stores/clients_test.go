package stores

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers"
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
func (c *stubClient) Capabilities() providers.Capabilities { return providers.ReadOnly }
func (c *stubClient) Close(context.Context) error          { c.closed.Store(true); return nil }

func TestClientCacheReusesUntilFingerprintChanges(t *testing.T) {
	ctx := context.Background()
	cache := NewClientCache()
	key := clientKey{storeKind: KindSecretStore, storeNamespace: "ns", storeName: "s", scope: providers.Scope{Namespace: "ns"}}
	var builds atomic.Int32
	build := func(context.Context) (providers.SecretsClient, error) {
		builds.Add(1)
		return &stubClient{}, nil
	}

	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := cache.Get(ctx, key, "v1", build); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Fatalf("20 concurrent Gets built %d clients, want 1", n)
	}

	first, _ := cache.Get(ctx, key, "v1", build)
	second, _ := cache.Get(ctx, key, "v2", build)
	if first == second || !first.(*stubClient).closed.Load() {
		t.Errorf("a changed fingerprint must replace and close the old client")
	}

	cache.Forget(ctx, KindSecretStore, "ns", "s")
	if !second.(*stubClient).closed.Load() || cache.Len() != 0 {
		t.Errorf("Forget must close and drop the store's clients")
	}
}
