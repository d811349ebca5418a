package referents

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/eso-dev/eso/providers/plugin"
)

// fakeServer hands out the watches the Watcher opens, so a test sends
// their events; refuse makes it answer as an API server that forbids them.
type fakeServer struct {
	mu      sync.Mutex
	watches map[string]*watch.FakeWatcher // by namespace/name of the field selector
	refuse  bool
}

func newWatcher(t *testing.T) (*Watcher, *fakeServer, workqueue.TypedRateLimitingInterface[reconcile.Request], *Queue) {
	t.Helper()
	srv := &fakeServer{watches: map[string]*watch.FakeWatcher{}}
	client := metadatafake.NewSimpleMetadataClient(metadatafake.NewTestScheme())
	client.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if srv.refuse {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New("no"))
		}
		w := watch.NewFakeWithChanSize(10, false)
		restrictions := action.(k8stesting.WatchActionImpl).WatchRestrictions
		key := action.GetNamespace() + "/" + restrictions.Fields.String()
		if l := restrictions.Labels.String(); l != "" {
			key += "|" + l
		}
		srv.watches[key] = w
		return true, w, nil
	})
	w := New(client)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = w.Start(ctx) }()
	for !w.ctxSet() {
		time.Sleep(time.Millisecond)
	}
	wq := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(wq.ShutDown)
	q := w.NewQueue()
	if err := q.Source().Start(ctx, wq); err != nil {
		t.Fatal(err)
	}
	return w, srv, wq, q
}

func (w *Watcher) ctxSet() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ctx != nil
}

// opened waits for the watch of namespace/name.
func (s *fakeServer) opened(t *testing.T, namespace, name string) *watch.FakeWatcher {
	t.Helper()
	return s.openedAs(t, namespace+"/metadata.name="+name)
}

// openedAs waits for the watch recorded under key.
func (s *fakeServer) openedAs(t *testing.T, key string) *watch.FakeWatcher {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.mu.Lock()
		w := s.watches[key]
		s.mu.Unlock()
		if w != nil {
			return w
		}
	}
	t.Fatalf("no watch opened for %s", key)
	return nil
}

func object(namespace, name, version string) runtime.Object {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, ResourceVersion: version}}
}

func missing(kind, namespace, name, seen string) error {
	return plugin.Awaiting(plugin.ObjectRef{Kind: kind, Namespace: namespace, Name: name, ResourceVersion: seen},
		fmt.Errorf("%w: %s %s/%s not found", plugin.ErrCredentialsNotFound, kind, namespace, name))
}

func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

// next is the next request queued within a second, or false.
func next(wq workqueue.TypedRateLimitingInterface[reconcile.Request]) (reconcile.Request, bool) {
	for deadline := time.Now().Add(time.Second); wq.Len() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return reconcile.Request{}, false
		}
	}
	r, _ := wq.Get()
	wq.Done(r)
	return r, true
}

func TestArrivalRequeuesExactlyItsWaiters(t *testing.T) {
	w, srv, wq, q := newWatcher(t)
	if !q.Await(missing("Secret", "ns", "creds", ""), request("store")) {
		t.Fatal("Await refused an awaitable error")
	}
	q.Await(missing("ConfigMap", "ns", "tpl", ""), request("other"))
	fw := srv.opened(t, "ns", "creds")
	fw.Add(object("ns", "unrelated", "3")) // a server that ignored the selector
	if r, ok := next(wq); ok {
		t.Fatalf("another object's event queued %v", r)
	}
	fw.Add(object("ns", "creds", "4"))
	if r, ok := next(wq); !ok || r != request("store") {
		t.Fatalf("the arrival queued %v (%v), want the store", r, ok)
	}
	if n := w.Watching(); n != 1 {
		t.Errorf("%d watches after the arrival, want only the ConfigMap's", n)
	}
}

// TestTheVersionSeenFixesNothing: a Secret that exists without its key is
// reported as it is when the watch opens; only a change requeues.
func TestTheVersionSeenFixesNothing(t *testing.T) {
	w, srv, wq, q := newWatcher(t)
	q.Await(missing("Secret", "ns", "creds", "7"), request("store"))
	fw := srv.opened(t, "ns", "creds")
	fw.Add(object("ns", "creds", "7"))
	if r, ok := next(wq); ok {
		t.Fatalf("the version the store saw queued %v", r)
	}
	if w.Watching() != 1 {
		t.Fatal("the watch ended on the version the store saw")
	}
	fw.Modify(object("ns", "creds", "8"))
	if r, ok := next(wq); !ok || r != request("store") {
		t.Fatalf("the change queued %v (%v), want the store", r, ok)
	}
}

// TestALateWaiterIsNotMissed: a waiter joining a watch that already
// reported a version it has not seen is re-queued at once.
func TestALateWaiterIsNotMissed(t *testing.T) {
	w, srv, wq, q := newWatcher(t)
	q.Await(missing("Secret", "ns", "creds", "7"), request("first"))
	srv.opened(t, "ns", "creds").Add(object("ns", "creds", "7")) // what first saw: the watch stays
	for deadline := time.Now().Add(5 * time.Second); lastReported(w, "creds") != "7"; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the watch did not report the version")
		}
	}
	q.Await(missing("Secret", "ns", "creds", "6"), request("late"))
	if r, ok := next(wq); !ok || r != request("late") {
		t.Fatalf("queued %v (%v), want the late waiter", r, ok)
	}
}

func TestOnlyNamedObjectsAreAwaited(t *testing.T) {
	_, _, _, q := newWatcher(t)
	for name, err := range map[string]error{
		"a plain error":                  errors.New("connection refused"),
		"credentials not found, unnamed": plugin.ErrCredentialsNotFound,
		"a kind not watched":             missing("ServiceAccount", "ns", "sa", ""),
		"no namespace":                   missing("Secret", "", "creds", ""),
	} {
		if q.Await(err, request("store")) {
			t.Errorf("%s: awaited", name)
		}
	}
	var none *Queue
	if none.Await(missing("Secret", "ns", "creds", ""), request("store")) {
		t.Error("a nil Queue awaited")
	}
}

// TestWatchesAreBounded: a namespace gets MaxWatchesPerNamespace watches,
// the cluster MaxWatches; waiters past them keep their recheck only.
func TestWatchesAreBounded(t *testing.T) {
	w, _, _, q := newWatcher(t)
	for i := range MaxWatchesPerNamespace {
		if !q.Await(missing("Secret", "tenant", fmt.Sprint("s", i), ""), request("es")) {
			t.Fatalf("watch %d refused below the namespace's bound", i)
		}
	}
	if q.Await(missing("Secret", "tenant", "one-more", ""), request("es")) {
		t.Fatal("a namespace went past MaxWatchesPerNamespace")
	}
	if !q.Await(missing("Secret", "tenant", "s0", ""), request("another")) {
		t.Fatal("a second waiter on a watched object was refused")
	}
	for ns := 0; w.Watching() < MaxWatches; ns++ {
		for i := 0; i < MaxWatchesPerNamespace && w.Watching() < MaxWatches; i++ {
			q.Await(missing("Secret", fmt.Sprint("ns", ns), fmt.Sprint("s", i), ""), request("es"))
		}
	}
	if q.Await(missing("Secret", "fresh", "s", ""), request("es")) {
		t.Fatal("the cluster went past MaxWatches")
	}
}

// TestWaitersThatStopAwaitingAreForgotten: a waiter that does not await
// again within waitFor (deleted, or fixed otherwise) is dropped, and its
// watch with it.
func TestWaitersThatStopAwaitingAreForgotten(t *testing.T) {
	w, _, _, q := newWatcher(t)
	now := time.Now()
	setNow := func(t time.Time) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.now = func() time.Time { return t }
	}
	setNow(now)
	q.Await(missing("Secret", "ns", "creds", ""), request("store"))
	setNow(now.Add(waitFor - time.Second))
	w.expire()
	if w.Watching() != 1 {
		t.Fatal("a waiter was forgotten before waitFor")
	}
	setNow(now.Add(waitFor + time.Second))
	w.expire()
	if w.Watching() != 0 {
		t.Fatal("a waiter that stopped awaiting kept its watch")
	}
}

// TestRefusedWatchFallsBack: where eso may not watch, the watch is given
// up and its place freed.
func TestRefusedWatchFallsBack(t *testing.T) {
	w, srv, _, q := newWatcher(t)
	srv.mu.Lock()
	srv.refuse = true
	srv.mu.Unlock()
	q.Await(missing("Secret", "ns", "creds", ""), request("store"))
	for deadline := time.Now().Add(5 * time.Second); w.Watching() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a refused watch kept its place")
		}
	}
}

// lastReported is the version the watch of Secret ns/name last reported.
func lastReported(w *Watcher, name string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ow := w.watches[objectKey{"Secret", "ns", name}]; ow != nil {
		return ow.last
	}
	return ""
}
