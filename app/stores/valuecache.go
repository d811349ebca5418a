package stores

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// cachesAuth reports whether a store's clients (and their logins) may be
// reused across syncs. ProviderDefined: yes, every built-in provider wants it.
func cachesAuth(p ssv2.CachingPolicy) bool {
	return p != ssv2.CachingNone && p != ssv2.CachingSecrets
}

// cachesSecrets reports whether values may be served from memory for the TTL.
func cachesSecrets(p ssv2.CachingPolicy) bool {
	return p == ssv2.CachingSecrets || p == ssv2.CachingAll
}

// Byte bounds of the answer caches, beside cacheConfig.maxEntries: a
// store's answers may be large (a find returns up to plugin.MaxFindBytes),
// so entries alone would not bound memory.
const (
	// maxCacheBytesPerStore bounds one store and scope's cache.
	maxCacheBytesPerStore = 8 << 20
	// maxCacheBytesTotal bounds all caches together, however many stores
	// tenants create.
	maxCacheBytesTotal = 64 << 20
	// entryOverhead is what an entry costs beside its key and value (list
	// elements, map slot, struct), so that many tiny answers count too.
	entryOverhead = 128
)

// valueBudget is the byte bound all answer caches share. Its LRU spans
// every cache, so when the total is reached the answer used least recently
// by any store goes first. Its lock guards the caches that use it.
type valueBudget struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	order *list.List // of *cacheEntry; front: most recently used
}

func newValueBudget(maxBytes int64) *valueBudget {
	return &valueBudget{max: maxBytes, order: list.New()}
}

// valueCache is an LRU of provider answers with a TTL. It belongs to one
// store and scope and holds at most maxEntries answers and maxBytes, within
// the budget all caches share, so no tenant grows it without bound.
type valueCache struct {
	budget     *valueBudget
	ttl        time.Duration
	maxEntries int
	maxBytes   int64
	now        func() time.Time
	// Guarded by budget.mu:
	order   *list.List // of *cacheEntry; front: most recently used
	entries map[string]*cacheEntry
	bytes   int64
	// retired: cleared for good; a sync still holding the cache adds nothing.
	retired bool
}

type cacheEntry struct {
	owner   *valueCache
	key     string
	value   any
	size    int64
	expires time.Time
	local   *list.Element // in owner.order
	global  *list.Element // in owner.budget.order
}

func newValueCache(cfg *ssv2.CacheConfig, budget *valueBudget) *valueCache {
	c := &valueCache{budget: budget, ttl: time.Minute, maxEntries: 100, maxBytes: maxCacheBytesPerStore, now: time.Now,
		order: list.New(), entries: map[string]*cacheEntry{}}
	if cfg != nil {
		if cfg.TTL.Duration > 0 {
			c.ttl = cfg.TTL.Duration
		}
		if cfg.MaxEntries > 0 {
			c.maxEntries = int(cfg.MaxEntries)
		}
	}
	return c
}

func (c *valueCache) get(key string) (any, bool) {
	c.budget.mu.Lock()
	defer c.budget.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	if c.now().After(e.expires) {
		e.remove()
		return nil, false
	}
	c.order.MoveToFront(e.local)
	c.budget.order.MoveToFront(e.global)
	return clone(e.value), true
}

// clone copies a cached answer, so a caller changing what it got cannot
// change the cache.
func clone(v any) any {
	switch t := v.(type) {
	case []byte:
		return bytes.Clone(t)
	case map[string][]byte:
		out := make(map[string][]byte, len(t))
		for k, b := range t {
			out[k] = bytes.Clone(b)
		}
		return out
	}
	return v
}

// answerSize is what caching value under key costs.
func answerSize(key string, value any) int64 {
	size := int64(len(key) + entryOverhead)
	switch t := value.(type) {
	case []byte:
		size += int64(len(t))
	case map[string][]byte:
		for k, b := range t {
			size += int64(len(k)+len(b)) + entryOverhead
		}
	}
	return size
}

// put caches value, then evicts least recently used answers until this
// cache and the shared budget are within their bounds. An answer larger
// than the cache's whole byte bound is not kept.
func (c *valueCache) put(key string, value any) {
	c.budget.mu.Lock()
	defer c.budget.mu.Unlock()
	if old, ok := c.entries[key]; ok {
		old.remove()
	}
	size := answerSize(key, value)
	if c.retired || size > c.maxBytes {
		return
	}
	e := &cacheEntry{owner: c, key: key, value: value, size: size, expires: c.now().Add(c.ttl)}
	e.local = c.order.PushFront(e)
	e.global = c.budget.order.PushFront(e)
	c.entries[key] = e
	c.bytes += size
	c.budget.bytes += size
	for len(c.entries) > c.maxEntries || c.bytes > c.maxBytes {
		c.order.Back().Value.(*cacheEntry).remove()
	}
	for c.budget.bytes > c.budget.max {
		c.budget.order.Back().Value.(*cacheEntry).remove()
	}
}

// remove drops e from its cache and the budget. The caller holds budget.mu.
func (e *cacheEntry) remove() {
	c := e.owner
	c.order.Remove(e.local)
	c.budget.order.Remove(e.global)
	delete(c.entries, e.key)
	c.bytes -= e.size
	c.budget.bytes -= e.size
}

// clear drops every answer, returning their bytes to the budget, and
// retires the cache: it was replaced or its store forgotten.
func (c *valueCache) clear() {
	c.budget.mu.Lock()
	defer c.budget.mu.Unlock()
	for _, e := range c.entries {
		e.remove()
	}
	c.retired = true
}

func (c *valueCache) len() int {
	c.budget.mu.Lock()
	defer c.budget.mu.Unlock()
	return len(c.entries)
}

// cachingClient serves successful answers from a valueCache; errors are never
// cached, so a fixed remote secret is seen at the next sync.
// newCachingClient wraps c, keeping its plugin.JSONProperties marker:
// without it core would read (and cache) a secret once per property.
func newCachingClient(c plugin.SecretsClient, cache *valueCache) plugin.SecretsClient {
	cc := &cachingClient{SecretsClient: c, cache: cache}
	if _, ok := c.(plugin.JSONProperties); ok {
		return &cachingJSONClient{cc}
	}
	return cc
}

type cachingJSONClient struct{ *cachingClient }

// PropertiesAreJSONPaths implements plugin.JSONProperties.
func (*cachingJSONClient) PropertiesAreJSONPaths() {}

type cachingClient struct {
	plugin.SecretsClient
	cache *valueCache
}

func cacheKey(call string, v any) string {
	b, _ := json.Marshal(v)
	return call + ":" + string(b)
}

func (c *cachingClient) GetSecret(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	key := cacheKey("GetSecret", ref)
	if v, ok := c.cache.get(key); ok {
		return v.([]byte), nil
	}
	v, err := c.SecretsClient.GetSecret(ctx, ref)
	if err == nil {
		c.cache.put(key, v)
	}
	return v, err
}

func (c *cachingClient) GetSecretMap(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) (map[string][]byte, error) {
	key := cacheKey("GetSecretMap", ref)
	if v, ok := c.cache.get(key); ok {
		return v.(map[string][]byte), nil
	}
	v, err := c.SecretsClient.GetSecretMap(ctx, ref)
	if err == nil {
		c.cache.put(key, v)
	}
	return v, err
}

func (c *cachingClient) GetAllSecrets(ctx context.Context, find esv1.ExternalSecretFind) (map[string][]byte, error) {
	key := cacheKey("GetAllSecrets", find)
	if v, ok := c.cache.get(key); ok {
		return v.(map[string][]byte), nil
	}
	v, err := c.SecretsClient.GetAllSecrets(ctx, find)
	if err == nil {
		c.cache.put(key, v)
	}
	return v, err
}

// CheckAuth is never answered from the cache.
func (c *cachingClient) CheckAuth(ctx context.Context) error {
	if checker, ok := c.SecretsClient.(plugin.AuthChecker); ok {
		return checker.CheckAuth(ctx)
	}
	return nil
}

// PushSecret, DeleteSecret and SecretExists are never cached.
func (c *cachingClient) PushSecret(ctx context.Context, req plugin.PushRequest) error {
	w, err := writerOf(c.SecretsClient)
	if err != nil {
		return err
	}
	return w.PushSecret(ctx, req)
}

func (c *cachingClient) DeleteSecret(ctx context.Context, remoteKey, property string) error {
	w, err := writerOf(c.SecretsClient)
	if err != nil {
		return err
	}
	return w.DeleteSecret(ctx, remoteKey, property)
}

func (c *cachingClient) SecretExists(ctx context.Context, remoteKey string) (bool, error) {
	w, err := writerOf(c.SecretsClient)
	if err != nil {
		return false, err
	}
	return w.SecretExists(ctx, remoteKey)
}

func writerOf(c plugin.SecretsClient) (plugin.Writer, error) {
	if w, ok := c.(plugin.Writer); ok {
		return w, nil
	}
	return nil, fmt.Errorf("%w: this client does not write", plugin.ErrNotSupported)
}
