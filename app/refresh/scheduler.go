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
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/eso-dev/eso/app/queue"
)

// Priority of scheduled refreshes: the same as unchanged objects of the
// initial list, below every event.
const Priority = handler.LowPriority

// Scheduler queues reconcile requests at a later time, at low priority.
type Scheduler struct {
	// Held is the controller's queue; its Source is what the controller
	// watches (builder.WatchesRawSource).
	queue.Held
}

// NewScheduler returns a scheduler; it queues nothing until its controller starts it.
func NewScheduler() *Scheduler { return &Scheduler{} }

// After queues req after d at refresh priority. Before the controller has
// started it does nothing: the initial list reconciles every object anyway.
func (s *Scheduler) After(req reconcile.Request, d time.Duration) {
	q := s.Queue()
	if q == nil {
		return
	}
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{After: d, Priority: ptr.To(Priority)}, req)
		return
	}
	q.AddAfter(req, d)
}
