package manager

import (
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

func plainQueue() workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
}

func priorityQueue() workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return priorityqueue.New[reconcile.Request]("test")
}

// TestHealthzFailsWhenWorkersStall: a controller with items waiting while no
// worker has taken or finished one for longer than stallAfter fails /healthz;
// a shorter pause, an idle (empty) queue and a worker finishing its item do not.
func TestHealthzFailsWhenWorkersStall(t *testing.T) {
	for name, newQueue := range map[string]func() workqueue.TypedRateLimitingInterface[reconcile.Request]{
		"plain": plainQueue, "priority": priorityQueue,
	} {
		t.Run(name, func(t *testing.T) {
			clock := &fakeClock{t: time.Unix(1_000_000, 0)}
			h := newHealth(false, nil)
			h.now = clock.Now
			q := h.watch("externalsecret", newQueue())
			defer q.ShutDown()

			// A worker takes the only item and hangs on it: the queue is
			// empty, so eso is idle as far as anyone can tell.
			q.Add(request("a"))
			taken, _ := q.Get()
			clock.Step(stallAfter + time.Hour)
			if err := h.Live(nil); err != nil {
				t.Fatalf("empty queue: %v", err)
			}

			// Work arrives and nobody takes it.
			q.Add(request("b"))
			waitLen(t, q, 1)
			if err := h.Live(nil); err == nil || !strings.Contains(err.Error(), "controller externalsecret") {
				t.Fatalf("items waiting with no progress for over %s: got %v, want a failure naming the controller", stallAfter, err)
			}

			// The worker finishes: progress, healthy again until the next stall.
			q.Done(taken)
			if err := h.Live(nil); err != nil {
				t.Fatalf("right after a reconcile finished: %v", err)
			}
			clock.Step(stallAfter - time.Second)
			if err := h.Live(nil); err != nil {
				t.Fatalf("items waiting for less than %s: %v", stallAfter, err)
			}
			clock.Step(2 * time.Second)
			if err := h.Live(nil); err == nil {
				t.Fatalf("items waiting for over %s: healthy", stallAfter)
			}
		})
	}
}

// TestHealthzIgnoresControllersNotStarted: a controller whose workers have not
// asked for work yet (its sources are still syncing) is /readyz's concern,
// not a reason to restart eso.
func TestHealthzIgnoresControllersNotStarted(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	h := newHealth(false, nil)
	h.now = clock.Now
	q := h.watch("secretstore", plainQueue())
	defer q.ShutDown()
	q.Add(request("a"))
	clock.Step(stallAfter + time.Hour)
	if err := h.Live(nil); err != nil {
		t.Fatal(err)
	}
}

// TestReadyWaitsForEveryController: /readyz fails until every controller the
// manager runs has workers asking for work, except on a standby replica.
func TestReadyWaitsForEveryController(t *testing.T) {
	elected := make(chan struct{})
	h := newHealth(true, elected)
	h.expect()
	h.expect()
	a := h.watch("a", plainQueue())
	defer a.ShutDown()

	if err := h.Ready(nil); err != nil {
		t.Fatalf("standby replica (not elected): %v", err)
	}
	close(elected)
	if err := h.Ready(nil); err == nil || !strings.Contains(err.Error(), "0 of 2") {
		t.Fatalf("leader with no controller started: got %v, want 0 of 2", err)
	}
	// A worker of a asks for work; b has not even built its queue.
	a.Add(request("x"))
	a.Get()
	if err := h.Ready(nil); err == nil || !strings.Contains(err.Error(), "1 of 2") {
		t.Fatalf("one of two controllers started: got %v", err)
	}
	b := h.watch("b", priorityQueue())
	defer b.ShutDown()
	if err := h.Ready(nil); err == nil {
		t.Fatal("b's queue exists but no worker asked it for work: ready")
	}
	go b.Get()
	deadline := time.Now().Add(5 * time.Second)
	for h.Ready(nil) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("both controllers started: %v", h.Ready(nil))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReadyWithoutLeaderElectionWaitsForControllers: without leader election
// every replica runs the controllers, whatever the elected signal says.
func TestReadyWithoutLeaderElectionWaitsForControllers(t *testing.T) {
	h := newHealth(false, make(chan struct{}))
	h.expect()
	if err := h.Ready(nil); err == nil {
		t.Fatal("ready with a controller not started")
	}
}

// waitLen waits for q to count n items ready (the priority queue hands
// items over asynchronously).
func waitLen(t *testing.T, q workqueue.TypedRateLimitingInterface[reconcile.Request], n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for q.Len() != n {
		if time.Now().After(deadline) {
			t.Fatalf("queue has %d items, want %d", q.Len(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
