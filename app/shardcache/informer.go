package shardcache

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kind is a sharded kind that has been asked for, and the informer handed
// out for it: what is done to it is done in every owned namespace and
// recorded, so that a namespace added later gets it too. Its state is
// guarded by the Cache's mu.
type kind struct {
	c     *Cache
	key   kindKey
	proto client.Object // an empty object of the kind

	fields    []fieldIndex
	indexers  toolscache.Indexers
	handlers  map[*registration]struct{}
	informers map[string]cache.Informer // by namespace
	removed   bool
}

type fieldIndex struct {
	field   string
	extract client.IndexerFunc
}

var _ cache.Informer = (*kind)(nil)

// kindFor returns the kind, creating its informer in every owned namespace
// the first time it is asked for.
func (c *Cache) kindFor(k kindKey) (*kind, error) {
	c.mu.RLock()
	kd := c.kinds[k]
	c.mu.RUnlock()
	if kd != nil {
		return kd, nil
	}
	proto, err := c.newObject(k)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kd := c.kinds[k]; kd != nil {
		return kd, nil
	}
	kd = &kind{
		c:         c,
		key:       k,
		proto:     proto,
		indexers:  toolscache.Indexers{},
		handlers:  map[*registration]struct{}{},
		informers: map[string]cache.Informer{},
	}
	for _, n := range c.namespaces {
		if err := kd.join(n); err != nil {
			return nil, fmt.Errorf("namespace %s: %w", n.name, err)
		}
	}
	c.kinds[k] = kd
	return kd, nil
}

// join creates the kind's informer in namespace n with everything recorded
// for it. Called with c.mu held, so nothing here may block. It runs only for
// a new namespace, whose cache has not started (so IndexField does not wait
// for a sync), or for a new kind, which has no field indexes yet.
func (kd *kind) join(n *namespace) error {
	inf, err := n.cache.GetInformer(context.Background(), kd.proto, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	kd.informers[n.name] = inf // first, so that leave undoes a partial join
	for _, f := range kd.fields {
		if err := n.cache.IndexField(context.Background(), kd.proto, f.field, f.extract); err != nil {
			return err
		}
	}
	if len(kd.indexers) > 0 {
		if err := inf.AddIndexers(kd.indexers); err != nil {
			return err
		}
	}
	for r := range kd.handlers {
		h, err := inf.AddEventHandlerWithOptions(r.handler, r.options)
		if err != nil {
			return err
		}
		r.handles[n.name] = h
	}
	return nil
}

// leave forgets namespace ns: its handlers are removed first so that they
// hear nothing from it once it is gone. Called with c.mu held.
func (kd *kind) leave(ns string) {
	inf, ok := kd.informers[ns]
	if !ok {
		return
	}
	for r := range kd.handlers {
		if h, ok := r.handles[ns]; ok {
			_ = inf.RemoveEventHandler(h) // fails only for a foreign handle
			delete(r.handles, ns)
		}
	}
	delete(kd.informers, ns)
}

// AddEventHandler adds a handler to the informer of every owned namespace,
// now and later.
func (kd *kind) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return kd.AddEventHandlerWithOptions(h, toolscache.HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod is AddEventHandler with a resync period.
func (kd *kind) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, resync time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return kd.AddEventHandlerWithOptions(h, toolscache.HandlerOptions{ResyncPeriod: &resync})
}

// AddEventHandlerWithOptions is AddEventHandler with options.
func (kd *kind) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, opts toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	kd.c.mu.Lock()
	defer kd.c.mu.Unlock()
	if kd.removed {
		return nil, fmt.Errorf("the %s informer was removed", kd.key.gvk.Kind)
	}
	r := &registration{kind: kd, handler: h, options: opts, handles: map[string]toolscache.ResourceEventHandlerRegistration{}}
	for ns, inf := range kd.informers {
		handle, err := inf.AddEventHandlerWithOptions(h, opts)
		if err != nil {
			for ns, handle := range r.handles {
				_ = kd.informers[ns].RemoveEventHandler(handle)
			}
			return nil, fmt.Errorf("namespace %s: %w", ns, err)
		}
		r.handles[ns] = handle
	}
	kd.handlers[r] = struct{}{}
	return r, nil
}

// RemoveEventHandler removes a handler from every namespace. Idempotent.
func (kd *kind) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(*registration)
	if !ok || r.kind != kd {
		return errors.New("registration was not returned by this informer")
	}
	kd.c.mu.Lock()
	defer kd.c.mu.Unlock()
	var errs []error
	for ns, h := range r.handles {
		if inf, ok := kd.informers[ns]; ok {
			errs = append(errs, inf.RemoveEventHandler(h))
		}
	}
	clear(r.handles)
	delete(kd.handlers, r)
	return errors.Join(errs...)
}

// AddIndexers adds indexers to every namespace's informer, now and later.
func (kd *kind) AddIndexers(indexers toolscache.Indexers) error {
	kd.c.mu.Lock()
	defer kd.c.mu.Unlock()
	for name := range indexers {
		if _, ok := kd.indexers[name]; ok {
			return fmt.Errorf("indexer conflict: %s", name)
		}
	}
	for _, ns := range slices.Sorted(maps.Keys(kd.informers)) {
		if err := kd.informers[ns].AddIndexers(indexers); err != nil {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	maps.Copy(kd.indexers, indexers)
	return nil
}

// HasSynced reports whether every owned namespace's informer has synced.
func (kd *kind) HasSynced() bool {
	kd.c.mu.RLock()
	defer kd.c.mu.RUnlock()
	for _, inf := range kd.informers {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// IsStopped reports whether the informer was removed or the cache stopped.
func (kd *kind) IsStopped() bool {
	kd.c.mu.RLock()
	defer kd.c.mu.RUnlock()
	return kd.removed || kd.c.stopped
}

// registration is a handler added to a kind, with its handle in each
// namespace. handles is guarded by the Cache's mu.
type registration struct {
	kind    *kind
	handler toolscache.ResourceEventHandler
	options toolscache.HandlerOptions
	handles map[string]toolscache.ResourceEventHandlerRegistration
}

// HasSynced reports whether the handler has been given every object of
// every owned namespace.
func (r *registration) HasSynced() bool {
	r.kind.c.mu.RLock()
	defer r.kind.c.mu.RUnlock()
	for _, h := range r.handles {
		if !h.HasSynced() {
			return false
		}
	}
	return true
}
