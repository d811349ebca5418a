package manager

import (
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// wakeUpWait bounds how long ShutDown wakes waiting workers before it shuts
// the queue down regardless, as the queue itself would.
const wakeUpWait = 10 * time.Second

// stopSafeQueue is a priority queue whose ShutDown cannot deadlock.
//
// controller-runtime's priority queue (fixed upstream only in v0.25, which
// needs the Kubernetes 1.37 libraries) hands an item to a waiting worker with
// a blocking send while holding its locks. When the queue shuts down at that
// moment, the worker leaves without taking the item, the send blocks forever,
// and the next Done of any worker blocks on the lock: the controller never
// stops and the manager's stop fails after its grace period. ShutDown here
// first wakes every waiting worker with an item of its own, so that no worker
// is waiting inside the queue when it really shuts down.
type stopSafeQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]

	mu      sync.Mutex
	closing bool
	waiting int                        // workers inside the queue's GetWithPriority
	wakeUps map[reconcile.Request]bool // sent and not yet taken
	sent    int                        // wake-ups sent, to name each apart
	left    chan struct{}              // a waiting worker returned
}

func newStopSafeQueue(q priorityqueue.PriorityQueue[reconcile.Request]) *stopSafeQueue {
	return &stopSafeQueue{
		PriorityQueue: q,
		wakeUps:       map[reconcile.Request]bool{},
		left:          make(chan struct{}, 1),
	}
}

func (q *stopSafeQueue) Get() (reconcile.Request, bool) {
	item, _, shutdown := q.GetWithPriority()
	return item, shutdown
}

func (q *stopSafeQueue) GetWithPriority() (reconcile.Request, int, bool) {
	q.mu.Lock()
	if q.closing {
		q.mu.Unlock()
		return reconcile.Request{}, 0, true
	}
	q.waiting++
	q.mu.Unlock()

	item, priority, shutdown := q.PriorityQueue.GetWithPriority()

	q.mu.Lock()
	q.waiting--
	closing, wakeUp := q.closing, q.wakeUps[item]
	delete(q.wakeUps, item)
	q.mu.Unlock()
	select {
	case q.left <- struct{}{}:
	default:
	}
	if wakeUp || (closing && !shutdown) {
		// Stopping: the item is dropped, as the queue drops items taken
		// after it shut down.
		q.PriorityQueue.Done(item)
		return reconcile.Request{}, 0, true
	}
	return item, priority, shutdown
}

func (q *stopSafeQueue) ShutDown() {
	q.mu.Lock()
	q.closing = true
	q.mu.Unlock()
	deadline := time.NewTimer(wakeUpWait)
	defer deadline.Stop()
	for q.wakeWaiting() {
		select {
		case <-q.left:
		case <-deadline.C:
			q.PriorityQueue.ShutDown()
			return
		}
	}
	q.PriorityQueue.ShutDown()
}

func (q *stopSafeQueue) ShutDownWithDrain() { q.ShutDown() }

// wakeWaiting adds one wake-up item for each waiting worker not yet sent one
// and reports whether any worker is still waiting. Wake-up items go ahead of
// every other item and carry names no object can have.
func (q *stopSafeQueue) wakeWaiting() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.wakeUps) < q.waiting {
		q.sent++
		item := reconcile.Request{NamespacedName: types.NamespacedName{Name: "eso:wake-up:" + strconv.Itoa(q.sent)}}
		q.wakeUps[item] = true
		q.PriorityQueue.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(int(^uint(0) >> 1))}, item)
	}
	return q.waiting > 0
}
