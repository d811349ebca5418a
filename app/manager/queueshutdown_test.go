package manager

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestPriorityQueueStopsWhileWorkersWait runs workers as a controller does
// (take an item, mark it done) while items keep arriving, shuts the queue
// down, and expects every worker to return. The queue as controller-runtime
// builds it deadlocks here within a few rounds.
func TestPriorityQueueStopsWhileWorkersWait(t *testing.T) {
	for round := range 30 {
		q := newStopSafeQueue(priorityqueue.New[reconcile.Request]("round-" + strconv.Itoa(round)))
		var workers sync.WaitGroup
		for w := range 20 {
			workers.Go(func() {
				for i := 0; ; i++ {
					q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(i % 7)}, request(strconv.Itoa(w*1_000_000+i)))
					item, _, shutdown := q.GetWithPriority()
					if shutdown {
						return
					}
					q.Done(item)
				}
			})
		}
		time.Sleep(10 * time.Millisecond)
		stopped := make(chan struct{})
		go func() {
			q.ShutDown()
			workers.Wait()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-time.After(wakeUpWait / 2):
			t.Fatalf("round %d: workers still running %s after the queue shut down", round, wakeUpWait/2)
		}
	}
}
