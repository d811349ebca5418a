package manager

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// terms counts, over every replica, the singleton runs going on and the
// most seen at once.
type terms struct {
	mu      sync.Mutex
	running map[string]bool
	starts  map[string]int
	overlap bool
}

func (tr *terms) runnable(replica string) manager.Runnable {
	return manager.RunnableFunc(func(ctx context.Context) error {
		tr.mu.Lock()
		tr.starts[replica]++
		tr.running[replica] = true
		tr.overlap = tr.overlap || len(tr.running) > 1
		tr.mu.Unlock()
		<-ctx.Done()
		tr.mu.Lock()
		delete(tr.running, replica)
		tr.mu.Unlock()
		return nil
	})
}

func (tr *terms) state(replica string) (starts int, running bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.starts[replica], tr.running[replica]
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 20*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// A replica that loses the singleton Lease stops its singletons and goes
// on (its manager, and its share of the namespaces, with it): another
// replica takes them over, never at the same time, and the first runs them
// again when its turn comes back.
func TestSingletonsSurviveALostLease(t *testing.T) {
	cs := fake.NewClientset()
	var failing atomic.Bool // a's Lease writes fail: it cannot renew
	cs.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		lease := action.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease)
		if failing.Load() && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity == "a" {
			return true, nil, errors.NewServiceUnavailable("the API server is overloaded")
		}
		return false, nil, nil
	})
	tr := &terms{running: map[string]bool{}, starts: map[string]int{}}
	// replica runs one replica's singletons; stop ends them and returns
	// what their Start did; done reports it without waiting.
	replica := func(id string) (stop func() error, done <-chan error) {
		lock, err := resourcelock.New(resourcelock.LeasesResourceLock, "eso-system", "eso-leader", cs.CoreV1(), cs.CoordinationV1(),
			resourcelock.ResourceLockConfig{Identity: id})
		if err != nil {
			t.Fatal(err)
		}
		s := newSingletonGroup(lock, 2*time.Second, time.Second, 250*time.Millisecond, logr.Discard())
		if err := s.add(tr.runnable(id)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		ended := make(chan error, 1)
		go func() { ended <- s.Start(ctx); close(ended) }()
		stop = sync.OnceValue(func() error { cancel(); return <-ended })
		t.Cleanup(func() { _ = stop() })
		return stop, ended
	}

	_, aDone := replica("a")
	waitFor(t, "a to run the singletons", func() bool { n, running := tr.state("a"); return n == 1 && running })
	stopB, _ := replica("b")

	failing.Store(true)
	waitFor(t, "b to take the singletons over", func() bool { n, running := tr.state("b"); return n == 1 && running })
	if _, running := tr.state("a"); running {
		t.Fatal("a still runs the singletons after losing its Lease")
	}
	select {
	case err := <-aDone:
		t.Fatalf("a's singletons returned (%v) when their Lease was lost: the manager would stop", err)
	default:
	}

	failing.Store(false)
	if err := stopB(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a to run the singletons again", func() bool { n, running := tr.state("a"); return n == 2 && running })
	if tr.overlap {
		t.Error("two replicas ran the singletons at once")
	}
}

func TestSingletonsRouting(t *testing.T) {
	plain := manager.RunnableFunc(func(context.Context) error { return nil })
	if !needsElection(plain) {
		t.Error("a runnable that does not say otherwise needs leader election")
	}
	if needsElection(&singletons{}) {
		t.Error("singletons hold their own election")
	}
}
