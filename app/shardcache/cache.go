// Package shardcache is a controller-runtime cache whose set of watched
// namespaces changes at run time. A replica that owns some namespaces of a
// sharded deployment caches only the objects of those namespaces for the
// kinds it has many of, so its memory falls as replicas are added; every
// other kind, and every cluster-scoped kind, is cached cluster-wide as usual.
//
// Sharded kinds are served by one ordinary controller-runtime cache per owned
// namespace (cache.New with DefaultNamespaces={ns}); AddNamespace and
// RemoveNamespace start and stop them. Informers, event handlers and indexes
// asked for through this cache apply to every namespace it owns now or later.
//
// Costs and limits: each owned namespace opens one watch per sharded kind
// (and per form: typed, unstructured, metadata-only) that has been asked
// for, where a cluster-wide cache opens one in all; a namespace's first sync
// is one List per such kind, and at most Options.ConcurrentStarts such
// Lists run at once across all namespaces (startGate). A List of a sharded
// kind across all namespaces is the union over the owned namespaces that
// have synced, without Continue. A read of a sharded kind in a namespace
// not owned fails with ErrNotOwned, never NotFound. The state kept here is per kind and per namespace, never per
// object: objects are held only by the controller-runtime caches beneath.
package shardcache

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// ErrNotOwned is returned, wrapped, when a sharded kind is read in a
// namespace this cache does not own. It is deliberately not NotFound: the
// object may well exist, another replica holds it.
var ErrNotOwned = errors.New("namespace is not owned by this cache")

// IsNotOwned reports whether err says the namespace is not owned here.
func IsNotOwned(err error) bool { return errors.Is(err, ErrNotOwned) }

func notOwned(gvk schema.GroupVersionKind, ns string) error {
	return fmt.Errorf("%s in namespace %q: %w", gvk.Kind, ns, ErrNotOwned)
}

// Options configure a Cache.
type Options struct {
	// Options are the controller-runtime cache options: the cluster-wide
	// cache takes them as they are, every namespace cache takes them with
	// DefaultNamespaces narrowed to its namespace and ByObject to the sharded
	// kinds. A non-empty DefaultNamespaces bounds the namespaces that may be
	// added.
	cache.Options
	// Sharded reports whether a kind is cached per owned namespace, in its
	// full form (typed or unstructured) or, metadataOnly, as metadata. The
	// two forms are separate caches and may be decided apart: a kind whose
	// objects are sharded may keep a cluster-wide metadata cache of a
	// labelled few. Kinds it rejects, and cluster-scoped kinds whatever it
	// says, are cached cluster-wide. Nil shards nothing.
	Sharded Sharded
	// ConcurrentStarts bounds the namespace caches' informers making their
	// first List at once (see startGate); 0 means 32.
	ConcurrentStarts int
}

// Sharded decides which kinds, in which form, a Cache shards.
type Sharded func(gvk schema.GroupVersionKind, metadataOnly bool) bool

// Kinds is a Sharded predicate that accepts exactly the given kinds, in
// every form.
func Kinds(gvks ...schema.GroupVersionKind) Sharded {
	set := make(map[schema.GroupVersionKind]bool, len(gvks))
	for _, gvk := range gvks {
		set[gvk] = true
	}
	return func(gvk schema.GroupVersionKind, _ bool) bool { return set[gvk] }
}

// NewCacheFunc returns a constructor for ctrl.Options.NewCache that shards
// the given kinds. The manager's cache is then a *Cache:
// mgr.GetCache().(*shardcache.Cache).
func NewCacheFunc(sharded Sharded) cache.NewCacheFunc {
	return func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
		return New(cfg, Options{Options: opts, Sharded: sharded})
	}
}

// Cache implements cache.Cache over one cluster-wide cache and one cache per
// owned namespace. It is safe for concurrent use.
type Cache struct {
	cfg     *rest.Config
	base    cache.Options // defaulted; ByObject holds the sharded kinds only
	sharded Sharded
	scoped  sync.Map // GVK → namespaced, for the sharded kinds
	cluster cache.Cache
	starts  *startGate // shared by every namespace's informers
	// synced receives, coalesced, when a namespace added has synced
	// (NamespaceSynced).
	synced chan struct{}

	// mu guards everything below, and makes each change to the kinds or to
	// the namespaces atomic with respect to the other: a kind asked for
	// reaches every namespace, a namespace added gets every kind.
	mu         sync.RWMutex
	kinds      map[kindKey]*kind
	namespaces map[string]*namespace
	runCtx     context.Context // set by Start
	stopped    bool            // Start has returned
}

var _ cache.Cache = (*Cache)(nil)

// New builds a Cache. Sharded kinds named in ByObject must leave
// ByObject.Namespaces unset: the owned namespaces take its place.
func New(cfg *rest.Config, opts Options) (*Cache, error) {
	base := opts.Options
	if base.Scheme == nil {
		base.Scheme = scheme.Scheme
	}
	// Share one HTTP client and one mapper among all the caches built later.
	if base.HTTPClient == nil {
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return nil, fmt.Errorf("building the HTTP client: %w", err)
		}
		base.HTTPClient = hc
	}
	if base.Mapper == nil {
		m, err := apiutil.NewDynamicRESTMapper(cfg, base.HTTPClient)
		if err != nil {
			return nil, fmt.Errorf("building the REST mapper: %w", err)
		}
		base.Mapper = m
	}
	c := &Cache{
		cfg:        cfg,
		sharded:    opts.Sharded,
		starts:     newStartGate(opts.ConcurrentStarts),
		synced:     make(chan struct{}, 1),
		kinds:      map[kindKey]*kind{},
		namespaces: map[string]*namespace{},
	}
	if c.sharded == nil {
		c.sharded = func(schema.GroupVersionKind, bool) bool { return false }
	}
	c.base = base

	clusterOpts := base
	clusterOpts.ByObject = map[client.Object]cache.ByObject{}
	c.base.ByObject = map[client.Object]cache.ByObject{}
	for obj, by := range base.ByObject {
		k, sharded, err := c.route(obj)
		if err != nil {
			return nil, err
		}
		if !sharded {
			clusterOpts.ByObject[obj] = by
			continue
		}
		if by.Namespaces != nil {
			return nil, fmt.Errorf("%s is sharded by namespace: its ByObject.Namespaces must be unset", k.gvk)
		}
		c.base.ByObject[obj] = by
	}
	cluster, err := cache.New(cfg, clusterOpts)
	if err != nil {
		return nil, err
	}
	c.cluster = cluster
	return c, nil
}

// form tells apart the three caches controller-runtime keeps per kind.
type form int

const (
	structured form = iota
	unstructuredForm
	metadataForm
)

type kindKey struct {
	gvk  schema.GroupVersionKind
	form form
}

// keyOf names the kind of an object or of a list's items.
func (c *Cache) keyOf(obj runtime.Object) (kindKey, error) {
	gvk, err := apiutil.GVKForObject(obj, c.base.Scheme)
	if err != nil {
		return kindKey{}, err
	}
	if meta.IsListType(obj) {
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	switch obj.(type) {
	case runtime.Unstructured:
		return kindKey{gvk, unstructuredForm}, nil
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return kindKey{gvk, metadataForm}, nil
	}
	return kindKey{gvk, structured}, nil
}

// newObject is an empty object of the kind, to ask the namespace caches for
// its informer without holding on to a caller's object.
func (c *Cache) newObject(k kindKey) (client.Object, error) {
	switch k.form {
	case unstructuredForm:
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(k.gvk)
		return u, nil
	case metadataForm:
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(k.gvk)
		return m, nil
	}
	obj, err := c.base.Scheme.New(k.gvk)
	if err != nil {
		return nil, err
	}
	co, ok := obj.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%T is not a client.Object", obj)
	}
	return co, nil
}

// isSharded: the predicate first, it is cheap; a cluster-scoped kind
// cannot be split by namespace.
// Every read asks, so a kind's scope is remembered once the mapper knew it.
func (c *Cache) isSharded(k kindKey) (bool, error) {
	gvk := k.gvk
	if !c.sharded(gvk, k.form == metadataForm) {
		return false, nil
	}
	if namespaced, ok := c.scoped.Load(gvk); ok {
		return namespaced.(bool), nil
	}
	namespaced, err := apiutil.IsGVKNamespaced(gvk, c.base.Mapper)
	if err != nil {
		return false, err
	}
	c.scoped.Store(gvk, namespaced)
	return namespaced, nil
}

// route returns the kind of obj and whether it is sharded.
func (c *Cache) route(obj runtime.Object) (kindKey, bool, error) {
	k, err := c.keyOf(obj)
	if err != nil {
		return k, false, err
	}
	sharded, err := c.isSharded(k)
	return k, sharded, err
}

// Namespaces lists the owned namespaces, sorted.
func (c *Cache) Namespaces() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Sorted(maps.Keys(c.namespaces))
}

// readable returns the cache of namespace ns for reading kind k, and
// whether it runs, first making sure k is cached in every owned namespace
// (unless the options say reads must not start informers).
func (c *Cache) readable(ctx context.Context, k kindKey, ns string) (*namespace, bool, error) {
	if err := c.want(k); err != nil {
		return nil, false, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	n, owned := c.namespaces[ns]
	if !owned {
		return nil, false, notOwned(k.gvk, ns)
	}
	return n, n.done != nil, nil
}

// want makes sure kind k is cached in every owned namespace, now and later.
func (c *Cache) want(k kindKey) error {
	c.mu.RLock()
	kd := c.kinds[k]
	c.mu.RUnlock()
	if kd != nil {
		return nil
	}
	if c.base.ReaderFailOnMissingInformer {
		return &cache.ErrResourceNotCached{GVK: k.gvk}
	}
	_, err := c.kindFor(k)
	return err
}

// Get reads an object. For a sharded kind it answers from the cache of the
// object's namespace, or with an ErrNotOwned error if that is not owned.
func (c *Cache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	k, sharded, err := c.route(obj)
	if err != nil {
		return err
	}
	if !sharded {
		return c.cluster.Get(ctx, key, obj, opts...)
	}
	n, running, err := c.readable(ctx, k, key.Namespace)
	if err != nil {
		return err
	}
	return n.read(ctx, k, running, func(ctx context.Context) error { return n.cache.Get(ctx, key, obj, opts...) })
}

// List reads a list. For a sharded kind, with a namespace it answers from
// that namespace's cache (or ErrNotOwned); without one it answers with the
// union over the owned namespaces that have synced: objects of other
// namespaces are missing, not gone, and a union never waits on a namespace
// still syncing. Such a union does not support Continue, and a Limit
// cuts it at no particular namespace.
func (c *Cache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	k, sharded, err := c.route(list)
	if err != nil {
		return err
	}
	if !sharded {
		return c.cluster.List(ctx, list, opts...)
	}
	lo := client.ListOptions{}
	lo.ApplyOptions(opts)
	if lo.Continue != "" {
		return errors.New("continue list option is not supported by the cache")
	}
	if lo.Namespace != "" {
		n, running, err := c.readable(ctx, k, lo.Namespace)
		if err != nil {
			return err
		}
		return n.read(ctx, k, running, func(ctx context.Context) error { return n.cache.List(ctx, list, opts...) })
	}
	return c.listOwned(ctx, k, list, lo)
}

func (c *Cache) listOwned(ctx context.Context, k kindKey, list client.ObjectList, lo client.ListOptions) error {
	if err := c.want(k); err != nil {
		return err
	}
	c.mu.RLock()
	owned := slices.SortedFunc(maps.Values(c.namespaces), func(a, b *namespace) int { return strings.Compare(a.name, b.name) })
	running := c.runCtx != nil
	c.mu.RUnlock()

	empty, ok := list.DeepCopyObject().(client.ObjectList)
	if !ok {
		return fmt.Errorf("%T is not a client.ObjectList", list)
	}
	if err := meta.SetList(empty, nil); err != nil {
		return err
	}
	var items []runtime.Object
	for _, n := range owned {
		if running && !n.synced() {
			continue // not worked before it has synced (SetNamespaces)
		}
		part := empty.DeepCopyObject().(client.ObjectList)
		err := n.read(ctx, k, running, func(ctx context.Context) error { return n.cache.List(ctx, part, &lo) })
		if IsNotOwned(err) {
			continue // removed meanwhile: no longer part of the union
		}
		if err != nil {
			return err
		}
		got, err := meta.ExtractList(part)
		if err != nil {
			return err
		}
		items = append(items, got...)
		if lo.Limit > 0 {
			if lo.Limit -= int64(len(got)); lo.Limit <= 0 {
				break
			}
		}
	}
	return meta.SetList(list, items)
}

// GetInformer returns the informer of obj's kind. For a sharded kind it is
// one informer over every owned namespace, now and later: see kind.
func (c *Cache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	k, sharded, err := c.route(obj)
	if err != nil {
		return nil, err
	}
	if !sharded {
		return c.cluster.GetInformer(ctx, obj, opts...)
	}
	return c.shardedInformer(ctx, k, opts)
}

// GetInformerForKind is GetInformer for a kind named by its GVK.
func (c *Cache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	k := kindKey{gvk, structured}
	sharded, err := c.isSharded(k)
	if err != nil {
		return nil, err
	}
	if !sharded {
		return c.cluster.GetInformerForKind(ctx, gvk, opts...)
	}
	return c.shardedInformer(ctx, k, opts)
}

func (c *Cache) shardedInformer(ctx context.Context, k kindKey, opts []cache.InformerGetOption) (cache.Informer, error) {
	kd, err := c.kindFor(k)
	if err != nil {
		return nil, err
	}
	get := cache.InformerGetOptions{}
	for _, o := range opts {
		o(&get)
	}
	c.mu.RLock()
	running := c.runCtx != nil
	c.mu.RUnlock()
	// As controller-runtime: block by default, but only once started.
	if running && (get.BlockUntilSynced == nil || *get.BlockUntilSynced) {
		if !toolscache.WaitForCacheSync(ctx.Done(), kd.HasSynced) {
			return nil, apierrors.NewTimeoutError(fmt.Sprintf("failed waiting for %s informer to sync", k.gvk.Kind), 0)
		}
	}
	return kd, nil
}

// RemoveInformer stops the informer of obj's kind; for a sharded kind, in
// every namespace, and forgets its handlers and indexes.
func (c *Cache) RemoveInformer(ctx context.Context, obj client.Object) error {
	k, sharded, err := c.route(obj)
	if err != nil {
		return err
	}
	if !sharded {
		return c.cluster.RemoveInformer(ctx, obj)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	kd := c.kinds[k]
	if kd == nil {
		return nil
	}
	kd.removed = true
	delete(c.kinds, k)
	var errs []error
	for _, n := range c.namespaces {
		errs = append(errs, n.cache.RemoveInformer(ctx, kd.proto))
	}
	return errors.Join(errs...)
}

// IndexField adds a field index. For a sharded kind it reaches every owned
// namespace's cache, now and later.
func (c *Cache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	k, sharded, err := c.route(obj)
	if err != nil {
		return err
	}
	if !sharded {
		return c.cluster.IndexField(ctx, obj, field, extract)
	}
	kd, err := c.kindFor(k)
	if err != nil {
		return err
	}
	// Record it first, so a namespace added from now on gets it; apply it to
	// the current ones outside the lock, since a started namespace cache
	// blocks IndexField until its informer has synced.
	c.mu.Lock()
	if kd.removed {
		c.mu.Unlock()
		return fmt.Errorf("the %s informer was removed", k.gvk.Kind)
	}
	if slices.ContainsFunc(kd.fields, func(f fieldIndex) bool { return f.field == field }) {
		c.mu.Unlock()
		return fmt.Errorf("indexer conflict: field %q of %s is already indexed", field, k.gvk.Kind)
	}
	kd.fields = append(kd.fields, fieldIndex{field, extract})
	current := slices.Collect(maps.Values(c.namespaces))
	c.mu.Unlock()
	for _, n := range current {
		nctx, cancel := n.within(ctx)
		err := n.cache.IndexField(nctx, kd.proto, field, extract)
		cancel()
		if err != nil && n.ctx.Err() == nil {
			return fmt.Errorf("indexing %s in namespace %s: %w", field, n.name, err)
		}
	}
	return nil
}

// Start runs the cluster-wide cache and every owned namespace's cache until
// ctx ends, then stops them all and returns once they have stopped.
func (c *Cache) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.runCtx != nil || c.stopped {
		c.mu.Unlock()
		return errors.New("cache already started")
	}
	c.runCtx = ctx
	for _, n := range c.namespaces {
		c.run(n)
	}
	c.mu.Unlock()

	err := c.cluster.Start(ctx) // returns once ctx ends, or on failure

	c.mu.Lock()
	c.stopped = true
	owned := slices.Collect(maps.Values(c.namespaces))
	clear(c.namespaces)
	for _, kd := range c.kinds {
		clear(kd.informers)
		for r := range kd.handlers {
			clear(r.handles)
		}
	}
	c.mu.Unlock()
	for _, n := range owned {
		n.stop()
	}
	return err
}

// WaitForCacheSync waits for the cluster-wide cache and the caches of the
// namespaces owned when it is called. A namespace removed meanwhile does
// not count.
func (c *Cache) WaitForCacheSync(ctx context.Context) bool {
	if !c.cluster.WaitForCacheSync(ctx) {
		return false
	}
	c.mu.RLock()
	owned := slices.Collect(maps.Values(c.namespaces))
	c.mu.RUnlock()
	for _, n := range owned {
		nctx, cancel := n.within(ctx)
		synced := n.cache.WaitForCacheSync(nctx)
		cancel()
		if !synced && n.ctx.Err() == nil {
			return false
		}
	}
	return ctx.Err() == nil
}
