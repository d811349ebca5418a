package refresh

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestNewObjectsGoAheadOfRefreshes fills the queue with due refreshes, then
// adds an object the way a watch event does: it is handed out first.
func TestNewObjectsGoAheadOfRefreshes(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	s := NewScheduler()
	if err := s.Source().Start(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		s.After(req(fmt.Sprintf("refresh-%d", i)), 1) // due at once
	}
	for deadline := time.Now().Add(10 * time.Second); q.Len() < 1000 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	q.Add(req("new"))

	got, priority, _ := q.GetWithPriority()
	if got != req("new") || priority != 0 {
		t.Fatalf("first item = %v (priority %d), want the new object ahead of 1000 refreshes", got, priority)
	}
	next, priority, _ := q.GetWithPriority()
	if priority != Priority {
		t.Errorf("refresh %v has priority %d, want %d", next, priority, Priority)
	}
}

func TestAfterBeforeStartIsANoOp(t *testing.T) {
	NewScheduler().After(req("x"), 1) // must not panic
}

func TestPlainQueueFallsBack(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	s := NewScheduler()
	if err := s.Source().Start(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	s.After(req("x"), 1)
	if got, _ := q.Get(); got != req("x") {
		t.Errorf("got %v", got)
	}
}

func req(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}
