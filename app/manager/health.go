package manager

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/eso-dev/eso/app/sharding"
)

// ReconcileTimeout bounds one reconcile of any eso controller (a controller
// may choose a shorter bound), so a worker that holds an item much longer
// ignores its context: it is wedged, not slow.
const ReconcileTimeout = time.Minute

// stallAfter is how long a controller may have work waiting while no worker
// takes or finishes an item before /healthz fails and the kubelet restarts
// eso. Well above ReconcileTimeout: every worker busy with a reconcile that
// runs to its bound is slow, not wedged.
const stallAfter = 5 * ReconcileTimeout

// Health is what /readyz and /healthz know of the controllers: how many the
// manager runs, which of them have started (sources synced, workers asking
// for work) and when each last made progress.
type Health struct {
	// leaderElection: without it every replica runs the controllers, so
	// readiness always waits for them.
	leaderElection bool
	elected        <-chan struct{}
	now            func() time.Time

	mu          sync.Mutex
	controllers int
	queues      []*queueProgress
}

func newHealth(leaderElection bool, elected <-chan struct{}) *Health {
	return &Health{leaderElection: leaderElection, elected: elected, now: time.Now}
}

// Ready fails until every controller has started. A standby replica (leader
// election on, another replica leads) never starts its controllers; it is
// ready once its caches are synced (the informers check), as upstream
// controllers do: marking it unready would stall the rolling update of a
// Deployment with two replicas forever.
func (h *Health) Ready(*http.Request) error {
	if h.leaderElection {
		select {
		case <-h.elected:
		default:
			return nil
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	started := 0
	for _, q := range h.queues {
		if q.started.Load() {
			started++
		}
	}
	if started < h.controllers {
		return fmt.Errorf("%d of %d controllers started", started, h.controllers)
	}
	return nil
}

// Live fails when a started controller has had items ready in its queue
// for stallAfter while no worker took or finished one: its workers are stuck
// and only a restart frees them. An empty queue is idle, not stuck.
func (h *Health) Live(*http.Request) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for _, q := range h.queues {
		if !q.started.Load() {
			continue
		}
		waiting := q.queue.Len()
		if idle := h.now().Sub(time.Unix(0, q.lastProgress.Load())); waiting > 0 && idle > stallAfter {
			errs = append(errs, fmt.Errorf("controller %s: %d items waiting, no reconcile taken or finished for %s",
				q.name, waiting, idle.Round(time.Second)))
		}
	}
	return errors.Join(errs...)
}

// expect counts one more controller that must start before eso is ready.
func (h *Health) expect() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.controllers++
}

// watch records q, the work queue of controller name, and returns it
// wrapped so that its workers' calls report progress.
func (h *Health) watch(name string, q workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	p := &queueProgress{name: name, queue: q, now: h.now}
	h.mu.Lock()
	h.queues = append(h.queues, p)
	h.mu.Unlock()
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		safe := newStopSafeQueue(pq)
		return &watchedPriorityQueue{PriorityQueue: safe, watched: &watchedQueue{TypedRateLimitingInterface: safe, progress: p}}
	}
	return &watchedQueue{TypedRateLimitingInterface: q, progress: p}
}

// queueProgress is one controller's work queue as the probes see it. A
// controller launches its workers only once its sources have synced, so the
// first worker asking for an item marks it started.
type queueProgress struct {
	name  string
	queue interface{ Len() int }
	now   func() time.Time

	started atomic.Bool
	// lastProgress: unix nanoseconds of the last item a worker took or finished.
	lastProgress atomic.Int64
}

func (p *queueProgress) asking() {
	if !p.started.Load() {
		p.lastProgress.Store(p.now().UnixNano())
		p.started.Store(true)
	}
}

func (p *queueProgress) moved() { p.lastProgress.Store(p.now().UnixNano()) }

type watchedQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	progress *queueProgress
}

func (q *watchedQueue) Get() (reconcile.Request, bool) {
	q.progress.asking()
	item, shutdown := q.TypedRateLimitingInterface.Get()
	q.progress.moved()
	return item, shutdown
}

func (q *watchedQueue) Done(item reconcile.Request) {
	q.TypedRateLimitingInterface.Done(item)
	q.progress.moved()
}

// watchedPriorityQueue is a priority queue watched the same way: Get and
// Done go through a watchedQueue over the same queue.
type watchedPriorityQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	watched *watchedQueue
}

func (q *watchedPriorityQueue) Get() (reconcile.Request, bool) { return q.watched.Get() }

func (q *watchedPriorityQueue) Done(item reconcile.Request) { q.watched.Done(item) }

func (q *watchedPriorityQueue) GetWithPriority() (reconcile.Request, int, bool) {
	q.watched.progress.asking()
	item, priority, shutdown := q.PriorityQueue.GetWithPriority()
	q.watched.progress.moved()
	return item, priority, shutdown
}

// healthManager is the manager eso's controllers register with: it counts
// every controller added, so a controller built without ControllerOptions
// never counts as started and /readyz stays false instead of ignoring it.
type healthManager struct {
	ctrl.Manager
	health *Health
	// shards splits the controllers' work with --shards auto; nil otherwise.
	shards *sharding.Coordinator
	// singletons run, with --shards auto, what needs leader election.
	singletons *singletons
}

func (m *healthManager) Add(r manager.Runnable) error {
	if m.singletons != nil && needsElection(r) {
		if _, ok := r.(controller.Controller); ok {
			// Run by one replica only, it would leave the others' namespaces unworked.
			return errors.New("with --shards auto a controller must be built with ControllerOptions or LocalControllerOptions")
		}
		return m.singletons.add(r)
	}
	if err := m.Manager.Add(r); err != nil {
		return err
	}
	if _, ok := r.(controller.Controller); ok {
		m.health.expect()
	}
	return nil
}

// ControllerOptions completes opts for a controller of mgr reconciling
// objects like reconciles: its work queue reports to /readyz and /healthz,
// and its reconciles are bounded by ReconcileTimeout unless opts sets a
// bound. With --shards auto the controller runs on every replica and its
// queue admits only the requests of namespaces (and cluster-scoped names)
// this replica works; when the replica gains some, the objects of
// reconciles' kind there are queued (ControllerOptionsListing: for
// requests that are not objects of one kind). Every eso controller is
// built with one of these or LocalControllerOptions.
func ControllerOptions(mgr ctrl.Manager, reconciles client.Object, opts controller.Options) controller.Options {
	return ControllerOptionsListing(mgr, shardLister(mgr.GetCache(), mgr.GetScheme(), mgr.GetRESTMapper(), reconciles), opts)
}

// ControllerOptionsListing is ControllerOptions for a controller whose
// requests are not objects of one kind: list is what it queues for the
// namespaces its replica gains.
func ControllerOptionsListing(mgr ctrl.Manager, list sharding.Lister, opts controller.Options) controller.Options {
	m, ok := mgr.(*healthManager)
	if !ok || m.shards == nil {
		return LocalControllerOptions(mgr, opts)
	}
	opts.NeedLeaderElection = ptr.To(false)
	return withQueue(mgr, opts, func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		return m.shards.Queue(q, list)
	})
}

// OnRelease registers f to be called, with --shards auto, after this
// replica gave work up, with what it still works (sharding.Key): to drop
// what it keeps per object of what it released. Without sharding it does
// nothing: nothing is ever released.
func OnRelease(mgr ctrl.Manager, f func(works func(key string) bool)) {
	if m, ok := mgr.(*healthManager); ok && m.shards != nil {
		m.shards.OnRelease(f)
	}
}

// OnGain registers f to be called, with --shards auto, with the namespaces
// this replica is about to start working, before it does. Without
// sharding it does nothing: the one replica works everything from its
// start.
func OnGain(mgr ctrl.Manager, f func(namespaces []string)) {
	if m, ok := mgr.(*healthManager); ok && m.shards != nil {
		m.shards.OnGain(f)
	}
}

// LocalControllerOptions is ControllerOptions for a controller that keeps
// only this process's own state (e.g. closing its clients of a deleted
// namespace): with --shards auto too, it runs on every object.
func LocalControllerOptions(mgr ctrl.Manager, opts controller.Options) controller.Options {
	if m, ok := mgr.(*healthManager); ok && m.shards != nil {
		opts.NeedLeaderElection = ptr.To(false)
	}
	return withQueue(mgr, opts, nil)
}

// withQueue sets the bound and the watched queue, passed through gate when
// one is given.
func withQueue(mgr ctrl.Manager, opts controller.Options, gate func(workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request]) controller.Options {
	if opts.ReconciliationTimeout == 0 {
		opts.ReconciliationTimeout = ReconcileTimeout
	}
	m, ok := mgr.(*healthManager)
	if !ok {
		return opts
	}
	if gate == nil {
		gate = func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
			return q
		}
	}
	// The queue controller-runtime builds by default, watched.
	priority := ptr.Deref(opts.UsePriorityQueue, ptr.Deref(mgr.GetControllerOptions().UsePriorityQueue, false))
	log := mgr.GetLogger()
	opts.NewQueue = func(name string, limiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		if priority {
			return gate(m.health.watch(name, priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) {
				o.Log = log.WithValues("controller", name)
				o.RateLimiter = limiter
			})))
		}
		return gate(m.health.watch(name, workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
			workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name})))
	}
	return opts
}
