// Package referents re-queues stores, generators and ExternalSecrets that
// wait for a Secret or ConfigMap that is not there yet (a credentials Secret,
// a template's ConfigMap): while something waits for such an object, one
// watch selected by its name reports its arrival, so exactly the waiters
// are re-queued within moments. eso caches only the Secrets it manages, so
// this costs nothing for the Secrets nobody waits for; a waiter that finds
// no room for its watch is still checked again every
// outcomes.RecheckInterval. The same watches follow the Secrets a PushSecret
// pushes, for as long as it names them (Follow).
package referents

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/eso-dev/eso/app/queue"

	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/providers/plugin"
)

// Bounds on what tenants can make eso watch: past them, waiters fall back
// on the recheck every outcomes.RecheckInterval.
const (
	// MaxWatches is how many objects are watched at once.
	MaxWatches = 512
	// MaxWatchesPerNamespace keeps one namespace from taking them all.
	MaxWatchesPerNamespace = 32
)

// waitFor is how long a waiter stays registered: a waiter that still fails
// registers again at each check, every outcomes.RecheckInterval, so one
// that was deleted or fixed otherwise is forgotten soon after.
const waitFor = 3 * outcomes.RecheckInterval

// retryWatch bounds the pause before a watch that broke is opened again;
// the pause doubles from a second while watches keep breaking within
// healthyWatch of opening.
const (
	retryWatch   = 30 * time.Second
	healthyWatch = 10 * time.Second
)

var resources = map[string]schema.GroupVersionResource{
	"Secret":    {Version: "v1", Resource: "secrets"},
	"ConfigMap": {Version: "v1", Resource: "configmaps"},
}

// Watcher keeps the watches of awaited objects.
type Watcher struct {
	client metadata.Interface
	now    func() time.Time

	mu           sync.Mutex
	ctx          context.Context // set by Start; nil before
	watches      map[objectKey]*objectWatch
	perNamespace map[string]int
	follows      map[string]*namespaceFollow // by namespace
}

type objectKey struct{ kind, namespace, name string }

type objectWatch struct {
	cancel  context.CancelFunc
	waiters map[waiter]waiting
	// last is the version the watch last reported (empty: none yet), so a
	// waiter joining after it is re-queued at once if it saw another.
	last string
}

type waiter struct {
	queue *Queue
	req   reconcile.Request
}

type waiting struct {
	// seen is the version the waiter read (empty: not found); an event of
	// that same version fixes nothing.
	seen  string
	until time.Time
}

// New returns a Watcher that watches with client once started.
func New(client metadata.Interface) *Watcher {
	return &Watcher{client: client, now: time.Now, watches: map[objectKey]*objectWatch{}, perNamespace: map[string]int{},
		follows: map[string]*namespaceFollow{}}
}

// Start runs until ctx ends, forgetting expired waiters; every watch ends
// with ctx. It is a manager Runnable.
func (w *Watcher) Start(ctx context.Context) error {
	w.mu.Lock()
	w.ctx = ctx
	w.mu.Unlock()
	tick := time.NewTicker(outcomes.RecheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			w.expire()
		}
	}
}

// NeedLeaderElection: the Watcher serves the controllers of its own
// process, and with --shards auto those run on every replica, leader or
// not. Elsewhere it costs nothing where no controller runs: it watches only
// what a controller asks for.
func (w *Watcher) NeedLeaderElection() bool { return false }

// Watching is how many objects are watched now.
func (w *Watcher) Watching() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.watches)
}

// Queue is one controller's handle: what it awaits is added to its queue.
type Queue struct {
	// Held is the controller's queue; its Source is what the controller
	// watches (builder.WatchesRawSource).
	queue.Held
	w *Watcher
}

// NewQueue returns a handle for one controller; register its Source with
// the controller (WatchesRawSource).
func (w *Watcher) NewQueue() *Queue { return &Queue{w: w} }

func (q *Queue) add(req reconcile.Request) {
	if wq := q.Queue(); wq != nil {
		wq.Add(req)
	}
}

// Await re-queues req when the object err names (plugin.Awaiting) is
// created or changes. It reports whether a watch covers it: false when err
// names no object or the bounds are reached.
func (q *Queue) Await(err error, req reconcile.Request) bool {
	if q == nil {
		return false
	}
	obj, ok := plugin.AwaitedObject(err)
	if !ok {
		return false
	}
	gvr, ok := resources[obj.Kind]
	if !ok || obj.Namespace == "" || obj.Name == "" {
		return false
	}
	w := q.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx == nil || w.ctx.Err() != nil {
		return false
	}
	key := objectKey{obj.Kind, obj.Namespace, obj.Name}
	ow := w.watches[key]
	if ow == nil {
		if len(w.watches) >= MaxWatches || w.perNamespace[obj.Namespace] >= MaxWatchesPerNamespace {
			return false
		}
		ctx, cancel := context.WithCancel(w.ctx)
		ow = &objectWatch{cancel: cancel, waiters: map[waiter]waiting{}}
		w.watches[key] = ow
		w.perNamespace[obj.Namespace]++
		go w.watch(ctx, key, gvr, ow)
	}
	if ow.last != "" && ow.last != obj.ResourceVersion {
		// The watch already reported a version this waiter has not seen.
		go q.add(req)
		return true
	}
	ow.waiters[waiter{q, req}] = waiting{seen: obj.ResourceVersion, until: w.now().Add(waitFor)}
	return true
}

// watch follows one object by name until an event fixes one of its waiters
// or nobody waits any more. Opened without a resource version, the watch
// first reports the object as it is, so one created before the watch
// opened is not missed.
func (w *Watcher) watch(ctx context.Context, key objectKey, gvr schema.GroupVersionResource, ow *objectWatch) {
	opts := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", key.name).String()}
	refused := w.keepWatching(ctx, gvr, key.namespace, opts, func(events watch.Interface) bool {
		return w.follow(ctx, key, ow, events)
	})
	if refused {
		w.drop(key, ow) // eso may not watch there: its waiters keep their recheck
	}
}

// keepWatching opens a watch of gvr in ns and hands it to read, opening it
// again whenever the server ends it, until ctx ends or read reports it is
// done. The pause before reopening doubles from a second to retryWatch
// while watches keep breaking within healthyWatch of opening. It reports
// whether the server refused the watch (forbidden, or no such resource).
func (w *Watcher) keepWatching(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, read func(watch.Interface) (done bool)) (refused bool) {
	pause := time.Second
	for ctx.Err() == nil {
		events, err := w.client.Resource(gvr).Namespace(ns).Watch(ctx, opts)
		if err != nil {
			if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err) {
				return true
			}
		} else {
			opened := time.Now()
			done := read(events)
			events.Stop()
			if done {
				return false
			}
			if time.Since(opened) > healthyWatch {
				pause = time.Second
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		pause = min(2*pause, retryWatch)
	}
	return false
}

// follow reads events until one fixes a waiter (true) or the watch ends.
func (w *Watcher) follow(ctx context.Context, key objectKey, ow *objectWatch, events watch.Interface) bool {
	for {
		select {
		case <-ctx.Done():
			return true
		case ev, ok := <-events.ResultChan():
			if !ok {
				return false
			}
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue // a deletion fixes nothing; errors end the watch
			}
			meta, ok := ev.Object.(metav1.Object)
			if !ok || meta.GetName() != key.name {
				continue
			}
			if w.fire(key, ow, meta.GetResourceVersion()) {
				return true
			}
		}
	}
}

// fire re-queues the waiters that did not see version yet. When it leaves
// none, the watch is done (true).
func (w *Watcher) fire(key objectKey, ow *objectWatch, version string) bool {
	w.mu.Lock()
	ow.last = version
	var due []waiter
	for wt, st := range ow.waiters {
		if st.seen != version {
			due = append(due, wt)
			delete(ow.waiters, wt)
		}
	}
	done := len(ow.waiters) == 0
	if done {
		w.forgetLocked(key, ow)
	}
	w.mu.Unlock()
	for _, wt := range due {
		wt.queue.add(wt.req)
	}
	return done
}

// expire forgets waiters that stopped registering, and the watches left
// without any.
func (w *Watcher) expire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	for key, ow := range w.watches {
		for wt, st := range ow.waiters {
			if now.After(st.until) {
				delete(ow.waiters, wt)
			}
		}
		if len(ow.waiters) == 0 {
			w.forgetLocked(key, ow)
		}
	}
}

func (w *Watcher) drop(key objectKey, ow *objectWatch) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forgetLocked(key, ow)
}

// forgetLocked ends ow's watch and frees its place, if it still holds it.
func (w *Watcher) forgetLocked(key objectKey, ow *objectWatch) {
	ow.cancel()
	if w.watches[key] != ow {
		return
	}
	delete(w.watches, key)
	if w.perNamespace[key.namespace]--; w.perNamespace[key.namespace] <= 0 {
		delete(w.perNamespace, key.namespace)
	}
}
