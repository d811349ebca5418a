// Package queue keeps a controller's work queue for code outside the
// controller that adds to it: the controller hands its queue over when it
// starts, through a source.
package queue

import (
	"context"
	"sync"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Held is a controller's queue once the controller started, nil before.
// The zero value is ready to use.
type Held struct {
	mu sync.Mutex
	q  workqueue.TypedRateLimitingInterface[reconcile.Request]
}

// Source is what the controller watches (builder.WatchesRawSource): when
// the controller starts, it hands h its queue.
func (h *Held) Source() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.q = q
		return nil
	})
}

// Queue is the controller's queue, nil until the controller started.
func (h *Held) Queue() workqueue.TypedRateLimitingInterface[reconcile.Request] {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.q
}
