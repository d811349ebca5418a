package shardcache

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// namespace is the cache of one owned namespace.
type namespace struct {
	name  string
	cache cache.Cache
	// ctx ends when the namespace is removed or the Cache stops.
	ctx    context.Context
	cancel context.CancelFunc
	runs   *runs
	// done is closed when cache.Start has returned; nil until run.
	done chan struct{}
	// ready is closed once the cache has started and first synced: reads
	// wait for it, as controller-runtime's wait for their informer.
	ready chan struct{}
}

// AddNamespace starts caching namespace ns: it creates there an informer for
// every sharded kind asked for so far, with its indexes and event handlers
// (which see the namespace's objects as Create events), and returns once
// they have synced and delivered those events, or when ctx ends. Before
// Start it waits for Start. Adding an owned namespace waits for it too.
func (c *Cache) AddNamespace(ctx context.Context, ns string) error {
	if ns == "" {
		return errors.New("namespace name is empty")
	}
	if err := ctx.Err(); err != nil {
		return err // add nothing that would not be waited for
	}
	c.mu.Lock()
	n, _, err := c.addLocked(ns)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.waitSynced(ctx, n)
}

// addLocked returns the cache of namespace ns, building and (once the
// Cache runs) starting it if it is not owned yet, and whether it did.
// Called with c.mu held.
func (c *Cache) addLocked(ns string) (n *namespace, added bool, err error) {
	if c.stopped {
		return nil, false, errors.New("cache has stopped")
	}
	if n, ok := c.namespaces[ns]; ok {
		return n, false, nil
	}
	if n, err = c.newNamespace(ns); err != nil {
		return nil, false, err
	}
	c.namespaces[ns] = n
	if c.runCtx != nil {
		c.run(n)
	}
	return n, true, nil
}

// newNamespace builds the namespace's cache with every kind, index and
// handler known so far. Called with c.mu held; nothing here blocks, since
// the cache has not started.
func (c *Cache) newNamespace(ns string) (*namespace, error) {
	opts := c.base
	if len(c.base.DefaultNamespaces) > 0 {
		cfg, ok := c.base.DefaultNamespaces[ns]
		if !ok {
			cfg, ok = c.base.DefaultNamespaces[cache.AllNamespaces]
		}
		if !ok {
			return nil, fmt.Errorf("namespace %s is outside the namespaces this cache may watch", ns)
		}
		opts.DefaultNamespaces = map[string]cache.Config{ns: cfg}
	} else {
		opts.DefaultNamespaces = map[string]cache.Config{ns: {}}
	}
	r := &runs{}
	r.idle = sync.NewCond(&r.mu)
	opts.NewInformer = tracked(c.base.NewInformer, r, c.starts)
	nc, err := cache.New(c.cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("building the cache of namespace %s: %w", ns, err)
	}
	n := &namespace{name: ns, cache: nc, runs: r, ready: make(chan struct{})}
	n.ctx, n.cancel = context.WithCancel(context.Background())

	for _, kd := range c.kinds {
		if err := kd.join(n); err != nil {
			for _, kd := range c.kinds {
				kd.leave(ns)
			}
			n.cancel()
			return nil, fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	return n, nil
}

// run starts the namespace's cache, and says on c.synced once it and its
// handlers have synced. Called with c.mu held, once.
func (c *Cache) run(n *namespace) {
	n.done = make(chan struct{})
	go func() {
		defer close(n.done)
		_ = n.cache.Start(n.ctx) // fails only if started twice
	}()
	go func() {
		if !n.cache.WaitForCacheSync(n.ctx) {
			return
		}
		close(n.ready)
		err := wait.PollUntilContextCancel(n.ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
			return c.handlersSynced(n), nil
		})
		if err == nil {
			select {
			case c.synced <- struct{}{}:
			default: // one already waits to be received: it covers this one
			}
		}
	}()
}

// NamespaceSynced receives once one or more namespaces added since it last
// did have synced, their handlers included (Synced then says which).
func (c *Cache) NamespaceSynced() <-chan struct{} { return c.synced }

// Synced returns those of namespaces that are owned and have synced, their
// handlers included. It changes nothing and waits for nothing.
func (c *Cache) Synced(namespaces []string) map[string]bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	synced := map[string]bool{}
	for _, ns := range namespaces {
		if n, ok := c.namespaces[ns]; ok && n.synced() && c.handlersSyncedLocked(n) {
			synced[ns] = true
		}
	}
	return synced
}

// stop stops the namespace's cache and returns once all its informers
// have returned. Called without c.mu.
func (n *namespace) stop() {
	n.cancel()
	n.runs.close()
	if n.done != nil {
		<-n.done
	}
}

// waitSynced waits for the namespace's informers and for its handlers to
// have been given every object.
func (c *Cache) waitSynced(ctx context.Context, n *namespace) error {
	nctx, cancel := n.within(ctx)
	defer cancel()
	err := n.await(nctx)
	if err == nil {
		err = wait.PollUntilContextCancel(nctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
			return c.handlersSynced(n), nil
		})
	}
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("waiting for namespace %s to sync: %w", n.name, ctx.Err())
	default:
		return fmt.Errorf("namespace %s was removed before it synced: %w", n.name, ErrNotOwned)
	}
}

// await waits for the namespace's cache to have started and synced.
func (n *namespace) await(ctx context.Context) error {
	select {
	case <-n.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Cache) handlersSynced(n *namespace) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.handlersSyncedLocked(n)
}

// handlersSyncedLocked is handlersSynced with c.mu held.
func (c *Cache) handlersSyncedLocked(n *namespace) bool {
	for _, kd := range c.kinds {
		for r := range kd.handlers {
			if h, ok := r.handles[n.name]; ok && !h.HasSynced() {
				return false
			}
		}
	}
	return true
}

// RemoveNamespace stops caching namespace ns and returns once its informers
// have stopped. Its objects leave Get and List without Delete events: they
// were not deleted, they are someone else's now.
func (c *Cache) RemoveNamespace(ns string) {
	c.mu.Lock()
	n, ok := c.namespaces[ns]
	if !ok {
		c.mu.Unlock()
		return
	}
	delete(c.namespaces, ns)
	for _, kd := range c.kinds {
		kd.leave(ns)
	}
	c.mu.Unlock()
	n.stop()
}

// within is ctx, also ended when the namespace goes: a read must not wait
// on an informer that will never sync.
func (n *namespace) within(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(n.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// read runs a read of kind k on the namespace's cache, first waiting for
// the cache to sync if it runs (a namespace being added), and reports a
// read the namespace's removal cut short as ErrNotOwned.
func (n *namespace) read(ctx context.Context, k kindKey, running bool, f func(context.Context) error) error {
	nctx, cancel := n.within(ctx)
	defer cancel()
	var err error
	if running {
		err = n.await(nctx)
	}
	if err == nil {
		err = f(nctx)
	}
	if err != nil && n.ctx.Err() != nil && ctx.Err() == nil {
		return notOwned(k.gvk, n.name)
	}
	return err
}

// runs counts a namespace's running informers, so that its removal can
// wait for them: controller-runtime's cache returns from Start before its
// informers have stopped.
type runs struct {
	mu     sync.Mutex
	idle   *sync.Cond
	n      int
	closed bool
}

func (r *runs) begin() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.n++
	return true
}

func (r *runs) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n--; r.n == 0 {
		r.idle.Broadcast()
	}
}

// close lets no informer start and waits for the running ones.
func (r *runs) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for r.n > 0 {
		r.idle.Wait()
	}
}

type newInformerFunc = func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer

// tracked wraps an informer constructor so that every informer it makes
// counts in r while it runs, and starts only when gate lets it.
func tracked(next newInformerFunc, r *runs, gate *startGate) newInformerFunc {
	if next == nil {
		next = toolscache.NewSharedIndexInformer
	}
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, idx toolscache.Indexers) toolscache.SharedIndexInformer {
		return &trackedInformer{SharedIndexInformer: next(lw, obj, resync, idx), runs: r, gate: gate}
	}
}

type trackedInformer struct {
	toolscache.SharedIndexInformer
	runs *runs
	gate *startGate
}

func (t *trackedInformer) Run(stop <-chan struct{}) {
	t.RunWithContext(wait.ContextForChannel(stop))
}

func (t *trackedInformer) RunWithContext(ctx context.Context) {
	if !t.runs.begin() {
		return
	}
	defer t.runs.end()
	if !t.gate.enter(ctx, t.HasSynced) {
		return // stopped while waiting for its turn
	}
	t.SharedIndexInformer.RunWithContext(ctx)
}

// SetNamespaces makes namespaces exactly the owned ones: it removes the
// others, starts caching the missing ones, and waits until ctx ends for
// those it started to sync. It returns the owned namespaces that have
// synced. A namespace that has not (slow, or failing to list) stays owned
// and goes on syncing; later calls do not wait for it again, so it holds
// up only itself.
func (c *Cache) SetNamespaces(ctx context.Context, namespaces []string) map[string]bool {
	want := make(map[string]bool, len(namespaces))
	for _, ns := range namespaces {
		want[ns] = true
	}
	for _, ns := range c.Namespaces() {
		if !want[ns] {
			c.RemoveNamespace(ns)
		}
	}
	var added []*namespace
	c.mu.Lock()
	for _, ns := range slices.Sorted(maps.Keys(want)) {
		// A namespace refused (not among DefaultNamespaces) never syncs.
		if n, isNew, err := c.addLocked(ns); err == nil && isNew {
			added = append(added, n)
		}
	}
	c.mu.Unlock()
	for _, n := range added {
		// One deadline for all: they sync side by side.
		_ = c.waitSynced(ctx, n)
	}
	return c.Synced(namespaces)
}

// synced reports, without waiting, whether the namespace's cache has
// started and first synced.
func (n *namespace) synced() bool {
	select {
	case <-n.ready:
		return true
	default:
		return false
	}
}
