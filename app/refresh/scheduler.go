// Package refresh schedules periodic refreshes at low priority, so objects
// that are new or were just edited are reconciled before the refreshes queued
// ahead of them.
//
// The Scheduler is a controller-runtime source: the controller hands it its
// queue when it starts. With the controller's priority queue enabled, a
// scheduled refresh enters below every watch event; an event for the same object
// raises it back to normal priority and makes it due at once.
package refresh

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Priority of scheduled refreshes: the same as unchanged objects of the
// initial list, below every event.
const Priority = handler.LowPriority

// Scheduler queues reconcile requests at a later time, at low priority.
type Scheduler struct {
	mu    sync.Mutex
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
}

// NewScheduler returns a scheduler; it queues nothing until its controller starts it.
func NewScheduler() *Scheduler { return &Scheduler{} }

// Source is what the controller watches (builder.WatchesRawSource).
func (s *Scheduler) Source() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.queue = q
		return nil
	})
}

// After queues req after d at refresh priority. Before the controller has
// started it does nothing: the initial list reconciles every object anyway.
func (s *Scheduler) After(req reconcile.Request, d time.Duration) {
	s.mu.Lock()
	q := s.queue
	s.mu.Unlock()
	if q == nil {
		return
	}
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{After: d, Priority: ptr.To(Priority)}, req)
		return
	}
	q.AddAfter(req, d)
}
