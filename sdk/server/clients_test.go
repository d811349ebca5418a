package server

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eso-dev/eso/providers/plugin"
)

// countingBuild builds scripted clients and counts the builds.
func countingBuild(p *scripted) func(context.Context) (plugin.SecretsClient, error) {
	return func(ctx context.Context) (plugin.SecretsClient, error) {
		return p.NewClient(ctx, plugin.Ref{}, plugin.Scope{})
	}
}

func TestClientCacheBuildsOncePerFingerprint(t *testing.T) {
	p, c := newScripted(), newClientCache(time.Hour)
	ctx := context.Background()
	key := clientKey{ref: plugin.Ref{Kind: "Scripted", Name: "a", Namespace: "ns"}, scope: plugin.Scope{Namespace: "ns"}}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, release, err := c.Get(ctx, key, "uid/1", countingBuild(p))
			if err != nil {
				t.Error(err)
				return
			}
			release()
		}()
	}
	wg.Wait()
	if p.builds.Load() != 1 {
		t.Fatalf("%d builds for 20 concurrent first calls, want 1", p.builds.Load())
	}
	other := key
	other.scope.Namespace = "ns-2"
	_, release, _ := c.Get(ctx, other, "uid/1", countingBuild(p))
	release()
	if p.builds.Load() != 2 {
		t.Fatal("another credentials namespace must get its own client")
	}
}

// TestClientCacheClosesReplacedClientsAfterTheirCalls: a configuration
// change while a call runs closes the old client only when the call is done.
func TestClientCacheClosesReplacedClientsAfterTheirCalls(t *testing.T) {
	p, c := newScripted(), newClientCache(time.Hour)
	ctx := context.Background()
	key := clientKey{ref: plugin.Ref{Kind: "Scripted", Name: "a", Namespace: "ns"}}
	_, releaseOld, _ := c.Get(ctx, key, "uid/1", countingBuild(p))
	_, releaseNew, _ := c.Get(ctx, key, "uid/2", countingBuild(p))
	if p.builds.Load() != 2 || p.closes.Load() != 0 {
		t.Fatalf("builds %d closes %d: the client in use was closed", p.builds.Load(), p.closes.Load())
	}
	releaseOld()
	releaseOld() // releasing twice releases once
	if p.closes.Load() != 1 {
		t.Fatalf("the replaced client was not closed after its call: %d closes", p.closes.Load())
	}
	releaseNew()
	if p.closes.Load() != 1 {
		t.Fatal("the current client was closed")
	}
}

func TestClientCacheDropsIdleAndForgottenClients(t *testing.T) {
	p, c := newScripted(), newClientCache(time.Hour)
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	c.SetClock(func() time.Time { return time.Unix(0, now.Load()) })
	ctx := context.Background()
	ref := plugin.Ref{Kind: "Scripted", Name: "a", Namespace: "ns"}
	for _, ns := range []string{"ns-1", "ns-2"} {
		_, release, _ := c.Get(ctx, clientKey{ref: ref, scope: plugin.Scope{Namespace: ns}}, "uid/1", countingBuild(p))
		release()
	}
	idle := clientKey{ref: plugin.Ref{Kind: "Scripted", Name: "idle", Namespace: "ns"}}
	_, release, _ := c.Get(ctx, idle, "uid/1", countingBuild(p))
	release()

	c.ForgetWhere(ctx, ofConfig(ref))
	if c.Len() != 1 || p.closes.Load() != 2 {
		t.Fatalf("after ForgetConfig: %d cached, %d closed", c.Len(), p.closes.Load())
	}
	c.DropIdle(ctx)
	if c.Len() != 1 {
		t.Fatal("a client used a moment ago was dropped as idle")
	}
	now.Add(int64(2 * time.Hour))
	c.DropIdle(ctx)
	if c.Len() != 0 || p.closes.Load() != 3 {
		t.Fatalf("after the idle timeout: %d cached, %d closed", c.Len(), p.closes.Load())
	}
}
