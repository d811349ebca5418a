package shardcache

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Defaults of Options.ConcurrentStarts and of how long one start may hold
// its place.
const (
	defaultConcurrentStarts = 32
	startWindow             = 5 * time.Second
)

// startGate bounds how many informers of the namespace caches make their
// first List at once. A replica that gains hundreds of namespaces, or a
// kind asked for while hundreds of namespaces run, would otherwise send a
// List per namespace and kind in the same instant. The HTTP client dials a
// new connection for every request it cannot place on one it holds, and
// thousands of TLS handshakes at once take the API server's CPU: the
// replicas' own Lease renewals then time out.
//
// An informer holds its place until it has synced, or for startWindow at
// most: one that cannot list (slow, refused, retrying) delays the others by
// that much, never for good. The bound is therefore on Lists in flight
// while the API server answers, and on their rate (ConcurrentStarts per
// startWindow) while it does not.
type startGate struct {
	places chan struct{}
	window time.Duration
}

func newStartGate(concurrent int) *startGate {
	if concurrent <= 0 {
		concurrent = defaultConcurrentStarts
	}
	return &startGate{places: make(chan struct{}, concurrent), window: startWindow}
}

// enter waits for a place, and gives it up once synced reports true, the
// window has passed or ctx ends. It returns false, holding nothing, if ctx
// ended first.
func (g *startGate) enter(ctx context.Context, synced func() bool) bool {
	select {
	case g.places <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	go func() {
		defer func() { <-g.places }()
		_ = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, g.window, true, func(context.Context) (bool, error) {
			return synced(), nil
		})
	}()
	return true
}
