package sharding

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Lister lists the requests of every object a controller reconciles whose
// key keep accepts; nil when the controller's requests are not objects of
// one kind it could list. When namespaces is not nil, keep accepts keys in
// those namespaces only, and no cluster-scoped key: the Lister need list
// no other namespace.
type Lister func(ctx context.Context, namespaces []string, keep func(key string) bool) ([]reconcile.Request, error)

// ListScopes are the List options a Lister lists with, one List each:
// every namespace when namespaces is nil, else each of namespaces.
func ListScopes(namespaces []string) []client.ListOption {
	if namespaces == nil {
		return []client.ListOption{client.InNamespace("")}
	}
	scopes := make([]client.ListOption, len(namespaces))
	for i, ns := range namespaces {
		scopes[i] = client.InNamespace(ns)
	}
	return scopes
}

// gate is what a sharded queue shares between its plain and priority forms:
// it admits only requests this replica works and counts those being
// reconciled, by key, so a release can wait for them.
type gate struct {
	works func(key string) bool
	list  Lister

	mu       sync.Mutex
	inflight map[string]int
	changed  chan struct{} // closed and replaced when a reconcile finishes
}

func newGate(works func(string) bool, list Lister) *gate {
	return &gate{works: works, list: list, inflight: map[string]int{}, changed: make(chan struct{})}
}

func keyOf(r reconcile.Request) string { return Key(r.Namespace, r.Name) }

// take admits item for a worker: the check and the count are one step, so
// a release that saw no reconcile of a key cannot miss one that starts.
func (g *gate) take(item reconcile.Request) bool {
	k := keyOf(item)
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.works(k) {
		return false
	}
	g.inflight[k]++
	return true
}

func (g *gate) done(item reconcile.Request) {
	k := keyOf(item)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inflight[k] == 0 {
		return
	}
	if g.inflight[k]--; g.inflight[k] == 0 {
		delete(g.inflight, k)
	}
	close(g.changed)
	g.changed = make(chan struct{})
}

// Drain returns once no reconcile of a key works rejects is running.
func (g *gate) Drain(ctx context.Context, works func(string) bool) error {
	for {
		g.mu.Lock()
		busy, changed := false, g.changed
		for k := range g.inflight {
			if !works(k) {
				busy = true
				break
			}
		}
		g.mu.Unlock()
		if !busy {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// resync adds, through add, the requests of the objects gained.
func (g *gate) resync(ctx context.Context, namespaces []string, before, after func(string) bool, add func(reconcile.Request)) {
	if g.list == nil {
		return
	}
	reqs, err := g.list(ctx, namespaces, func(k string) bool { return after(k) && !before(k) })
	if err != nil {
		return // the next change of each object queues it
	}
	for _, r := range reqs {
		add(r)
	}
}

// queue is a controller's rate-limiting queue behind a gate.
type queue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	*gate
}

func (q *queue) Add(item reconcile.Request) {
	if q.works(keyOf(item)) {
		q.TypedRateLimitingInterface.Add(item)
	}
}

func (q *queue) AddAfter(item reconcile.Request, d time.Duration) {
	if q.works(keyOf(item)) {
		q.TypedRateLimitingInterface.AddAfter(item, d)
	}
}

func (q *queue) AddRateLimited(item reconcile.Request) {
	if q.works(keyOf(item)) {
		q.TypedRateLimitingInterface.AddRateLimited(item)
	}
}

// Get hands out the next request this replica still works; those queued
// before their key was given up are dropped.
func (q *queue) Get() (reconcile.Request, bool) {
	for {
		item, shutdown := q.TypedRateLimitingInterface.Get()
		if shutdown || q.take(item) {
			return item, shutdown
		}
		q.Forget(item)
		q.TypedRateLimitingInterface.Done(item)
	}
}

func (q *queue) Done(item reconcile.Request) {
	q.TypedRateLimitingInterface.Done(item)
	q.done(item)
}

func (q *queue) Resync(ctx context.Context, namespaces []string, before, after func(string) bool) {
	q.resync(ctx, namespaces, before, after, q.TypedRateLimitingInterface.Add)
}

// handoverPriority is the priority of objects gained in a handover: below
// new and edited objects (0), so a handover never delays them, and above
// scheduled refreshes and initial lists (handler.LowPriority), since a
// gained object went unworked for as long as its namespace was in no one's
// hands, while a refresh only repeats a recent sync.
const handoverPriority = handler.LowPriority / 2

// priorityQueue is a controller's priority queue behind a gate: the plain
// queue's admission, plus the priority queue's own ways in and out. Objects
// gained in a handover enter at handoverPriority.
type priorityQueue struct {
	*queue
	pq priorityqueue.PriorityQueue[reconcile.Request]
}

var _ priorityqueue.PriorityQueue[reconcile.Request] = (*priorityQueue)(nil)

func (q *priorityQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	kept := items[:0:0]
	for _, item := range items {
		if q.works(keyOf(item)) {
			kept = append(kept, item)
		}
	}
	if len(kept) > 0 {
		q.pq.AddWithOpts(o, kept...)
	}
}

func (q *priorityQueue) Get() (reconcile.Request, bool) {
	item, _, shutdown := q.GetWithPriority()
	return item, shutdown
}

func (q *priorityQueue) GetWithPriority() (reconcile.Request, int, bool) {
	for {
		item, priority, shutdown := q.pq.GetWithPriority()
		if shutdown || q.take(item) {
			return item, priority, shutdown
		}
		q.Forget(item)
		q.pq.Done(item)
	}
}

func (q *priorityQueue) Resync(ctx context.Context, namespaces []string, before, after func(string) bool) {
	q.resync(ctx, namespaces, before, after, func(r reconcile.Request) {
		q.pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(handoverPriority)}, r)
	})
}

// Queue returns inner behind c's gate, registered with c: it admits only
// requests this replica works, is drained before c gives work up and, with
// list, is given the objects of what c gains. A priority queue stays one.
func (c *Coordinator) Queue(inner workqueue.TypedRateLimitingInterface[reconcile.Request], list Lister) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	q := gated(inner, c.Works, list)
	c.Register(q)
	return q
}

type gatedQueue interface {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	Worker
}

// gated puts inner behind a gate admitting what works accepts.
func gated(inner workqueue.TypedRateLimitingInterface[reconcile.Request], works func(string) bool, list Lister) gatedQueue {
	g := newGate(works, list)
	if pq, ok := inner.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		return &priorityQueue{queue: &queue{TypedRateLimitingInterface: pq, gate: g}, pq: pq}
	}
	return &queue{TypedRateLimitingInterface: inner, gate: g}
}
