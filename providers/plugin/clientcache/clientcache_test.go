package clientcache

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

type closingClient struct{ closed *atomic.Int32 }

func (closingClient) GetSecret(context.Context, esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	return nil, nil
}
func (closingClient) GetSecretMap(context.Context, esv1.ExternalSecretDataRemoteRef) (map[string][]byte, error) {
	return nil, nil
}
func (closingClient) GetAllSecrets(context.Context, esv1.ExternalSecretFind) (map[string][]byte, error) {
	return nil, nil
}
func (closingClient) Capabilities() plugin.Capabilities { return plugin.ReadOnly }
func (c closingClient) Close(context.Context) error     { c.closed.Add(1); return nil }

// TestClientCacheEvictsTheLeastRecentlyUsed: beyond MaxEntries a new key
// evicts the client used longest ago, closing it only once its caller is
// done with it.
func TestClientCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	var builds, closed atomic.Int32
	build := func(context.Context) (plugin.SecretsClient, error) {
		builds.Add(1)
		return closingClient{&closed}, nil
	}
	c := New[string](Options{MaxEntries: 2})
	clock := time.Unix(0, 0)
	c.SetClock(func() time.Time { clock = clock.Add(time.Second); return clock })
	ctx := context.Background()
	_, releaseA, _ := c.Get(ctx, "a", "1", build) // held while evicted
	_, releaseB, _ := c.Get(ctx, "b", "1", build)
	releaseB()
	_, releaseB, _ = c.Get(ctx, "b", "1", build) // b is now the most recent
	releaseB()
	_, releaseC, _ := c.Get(ctx, "c", "1", build)
	releaseC()
	if c.Len() != 2 || builds.Load() != 3 {
		t.Fatalf("%d cached after %d builds, want 2 after 3", c.Len(), builds.Load())
	}
	if closed.Load() != 0 {
		t.Fatal("the evicted client was closed while its caller still used it")
	}
	releaseA()
	if closed.Load() != 1 {
		t.Fatalf("%d closed after the evicted client's caller released it, want 1", closed.Load())
	}
	_, release, _ := c.Get(ctx, "b", "1", build)
	release()
	if builds.Load() != 3 {
		t.Error("the recently used client was evicted instead of the oldest")
	}
}
