package sharding

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func req(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

func queues(t *testing.T) map[string]workqueue.TypedRateLimitingInterface[reconcile.Request] {
	limiter := workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]()
	plain := workqueue.NewTypedRateLimitingQueue(limiter)
	pq := priorityqueue.New[reconcile.Request]("test")
	t.Cleanup(func() { plain.ShutDown(); pq.ShutDown() })
	return map[string]workqueue.TypedRateLimitingInterface[reconcile.Request]{"plain": plain, "priority": pq}
}

func TestQueueAdmitsOnlyWhatTheReplicaWorks(t *testing.T) {
	for name, inner := range queues(t) {
		t.Run(name, func(t *testing.T) {
			owned := atomic.Bool{}
			owned.Store(true)
			q := gated(inner, func(k string) bool { return k == "mine" || (k == "given-up" && owned.Load()) }, nil)
			q.Add(req("theirs", "x"))
			q.AddAfter(req("theirs", "y"), 0)
			q.AddRateLimited(req("theirs", "z"))
			q.Add(req("given-up", "x"))
			owned.Store(false) // queued, then given up before a worker took it
			q.Add(req("mine", "x"))
			// Refused at the door, not only skipped by Get.
			if q.Len() != 2 {
				t.Fatalf("%d requests queued, want 2 (given-up/x and mine/x)", q.Len())
			}
			got, _ := q.Get()
			if got != req("mine", "x") {
				t.Fatalf("got %v, want only mine/x", got)
			}
			q.Done(got)
			if q.Len() != 0 {
				t.Fatalf("%d requests left", q.Len())
			}
		})
	}
}

func TestDrainWaitsForReconcilesOfWhatIsGivenUp(t *testing.T) {
	for name, inner := range queues(t) {
		t.Run(name, func(t *testing.T) {
			q := gated(inner, func(string) bool { return true }, nil)
			q.Add(req("leaving", "x"))
			q.Add(req("staying", "x"))
			a, _ := q.Get()
			b, _ := q.Get()
			leaving := func(k string) bool { return k != "leaving" }

			drained := make(chan error, 1)
			go func() { drained <- q.Drain(t.Context(), leaving) }()
			for _, r := range []reconcile.Request{a, b} {
				if r.Namespace == "staying" {
					q.Done(r) // a reconcile of a kept key does not end the drain
				}
			}
			select {
			case err := <-drained:
				t.Fatalf("drained (%v) while a reconcile of a given-up namespace runs", err)
			case <-time.After(100 * time.Millisecond):
			}
			for _, r := range []reconcile.Request{a, b} {
				if r.Namespace == "leaving" {
					q.Done(r)
				}
			}
			if err := <-drained; err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			q.Add(req("leaving", "y"))
			r, _ := q.Get()
			cancel()
			if err := q.Drain(ctx, leaving); err == nil {
				t.Fatal("drain ended without waiting and without its context's error")
			}
			q.Done(r)
		})
	}
}

func TestResyncQueuesWhatWasGained(t *testing.T) {
	for name, inner := range queues(t) {
		t.Run(name, func(t *testing.T) {
			objects := []reconcile.Request{req("old", "a"), req("new", "a"), req("new", "b"), req("theirs", "a"), req("", "cluster-store")}
			q := gated(inner, func(k string) bool { return k != "theirs" }, func(_ context.Context, _ []string, keep func(string) bool) ([]reconcile.Request, error) {
				var out []reconcile.Request
				for _, o := range objects {
					if keep(keyOf(o)) {
						out = append(out, o)
					}
				}
				return out, nil
			})
			before := func(k string) bool { return k == "old" }
			after := func(k string) bool { return k != "theirs" }
			q.Resync(t.Context(), nil, before, after)
			got := map[reconcile.Request]bool{}
			for q.Len() > 0 {
				r, _ := q.Get()
				got[r] = true
				q.Done(r)
			}
			want := map[reconcile.Request]bool{req("new", "a"): true, req("new", "b"): true, req("", "cluster-store"): true}
			if len(got) != len(want) {
				t.Fatalf("queued %v, want %v", got, want)
			}
			for r := range want {
				if !got[r] {
					t.Fatalf("queued %v, want %v", got, want)
				}
			}
		})
	}
}

// A gained object goes ahead of refreshes queued before it, and behind an
// edited object queued after it.
func TestGainedObjectsGoBeforeRefreshes(t *testing.T) {
	pq := priorityqueue.New[reconcile.Request]("test")
	t.Cleanup(pq.ShutDown)
	g := gated(pq, func(string) bool { return true }, func(context.Context, []string, func(string) bool) ([]reconcile.Request, error) {
		return []reconcile.Request{req("gained", "a")}, nil
	})
	q := g.(priorityqueue.PriorityQueue[reconcile.Request])
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(handler.LowPriority)}, req("mine", "refresh"))
	g.Resync(t.Context(), nil, func(k string) bool { return k == "mine" }, func(string) bool { return true })
	q.Add(req("mine", "edited"))
	for _, want := range []reconcile.Request{req("mine", "edited"), req("gained", "a"), req("mine", "refresh")} {
		got, priority, _ := q.GetWithPriority()
		if got != want {
			t.Fatalf("got %v (priority %d), want %v", got, priority, want)
		}
		q.Done(got)
	}
}
