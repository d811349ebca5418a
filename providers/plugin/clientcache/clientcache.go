package clientcache

import (
	"context"
	"sync"
	"time"

	"github.com/eso-dev/eso/providers/plugin"
)

// Cache keeps one client per key while the key's fingerprint (the
// configuration's identity and generation) is unchanged, so a refresh costs
// no login. A replaced, forgotten or evicted client is closed once the calls
// using it have finished, never in the middle of one. Builds of one key are
// serialised (concurrent first calls cost one login); builds of different
// keys run in parallel. Core's store client cache and the provider server's
// both are one.
type Cache[K comparable] struct {
	opts Options
	now  func() time.Time

	mu      sync.Mutex
	entries map[K]*entry
}

// Options bound a Cache.
type Options struct {
	// IdleTimeout: DropIdle drops clients unused for longer. Zero keeps
	// them until forgotten.
	IdleTimeout time.Duration
	// MaxEntries: a new key beyond it evicts the least recently used
	// client. Zero is no limit.
	MaxEntries int
}

type entry struct {
	mu          sync.Mutex
	fingerprint string
	current     *SharedClient
	lastUsed    time.Time
	// dropped is set once the entry left the cache; a caller that waited
	// for it starts over instead of building a client nobody would close.
	dropped bool
}

// New returns an empty cache.
func New[K comparable](opts Options) *Cache[K] {
	return &Cache[K]{opts: opts, now: time.Now, entries: map[K]*entry{}}
}

// SetClock replaces the cache's clock, for tests of DropIdle.
func (c *Cache[K]) SetClock(now func() time.Time) { c.now = now }

// Get returns the client of key for fingerprint, building one if there is
// none or the fingerprint changed, and the function that releases it.
func (c *Cache[K]) Get(ctx context.Context, key K, fingerprint string,
	build func(context.Context) (plugin.SecretsClient, error)) (plugin.SecretsClient, func(), error) {
	for {
		e := c.entry(ctx, key)
		e.mu.Lock()
		if e.dropped {
			e.mu.Unlock()
			continue
		}
		shared, err := e.acquire(ctx, fingerprint, build)
		if err == nil {
			e.lastUsed = c.now()
		}
		e.mu.Unlock()
		if err != nil {
			return nil, nil, err
		}
		return shared.Client, shared.Releaser(ctx), nil
	}
}

// entry returns key's entry, created (and the least recently used one
// evicted beyond MaxEntries) if needed.
func (c *Cache[K]) entry(ctx context.Context, key K) *entry {
	c.mu.Lock()
	e, ok := c.entries[key]
	var evicted *entry
	if !ok {
		if c.opts.MaxEntries > 0 && len(c.entries) >= c.opts.MaxEntries {
			evicted = c.evictLocked()
		}
		e = &entry{lastUsed: c.now()}
		c.entries[key] = e
	}
	c.mu.Unlock()
	if evicted != nil {
		evicted.drop(ctx)
	}
	return e
}

// evictLocked removes the least recently used entry; the caller holds c.mu
// and drops it after unlocking.
func (c *Cache[K]) evictLocked() *entry {
	var oldestKey K
	var oldest *entry
	var oldestUsed time.Time
	for k, e := range c.entries {
		if !e.mu.TryLock() {
			continue // being built or used right now
		}
		used := e.lastUsed
		e.mu.Unlock()
		if oldest == nil || used.Before(oldestUsed) {
			oldestKey, oldest, oldestUsed = k, e, used
		}
	}
	if oldest != nil {
		delete(c.entries, oldestKey)
	}
	return oldest
}

// acquire returns the entry's client for fingerprint, replacing an outdated
// one. The caller holds e.mu.
func (e *entry) acquire(ctx context.Context, fingerprint string,
	build func(context.Context) (plugin.SecretsClient, error)) (*SharedClient, error) {
	if e.current != nil && e.fingerprint == fingerprint {
		e.current.Acquire()
		return e.current, nil
	}
	if e.current != nil {
		e.current.Retire(ctx)
		e.current = nil
	}
	cl, err := build(ctx)
	if err != nil {
		return nil, err
	}
	e.current, e.fingerprint = NewSharedClient(cl), fingerprint
	e.current.Acquire()
	return e.current, nil
}

// drop retires the entry's client; the entry has left the cache.
func (e *entry) drop(ctx context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.dropped = true
	if e.current != nil {
		e.current.Retire(ctx)
		e.current = nil
	}
}

// Forget drops the client of key, e.g. after its credentials were refused,
// so the next call logs in afresh.
func (c *Cache[K]) Forget(ctx context.Context, key K) {
	c.ForgetWhere(ctx, func(k K) bool { return k == key })
}

// ForgetWhere drops the clients of every key match selects.
func (c *Cache[K]) ForgetWhere(ctx context.Context, match func(K) bool) {
	c.dropWhere(ctx, func(k K, _ *entry) bool { return match(k) })
}

// DropIdle drops the clients unused for longer than the idle timeout.
func (c *Cache[K]) DropIdle(ctx context.Context) {
	if c.opts.IdleTimeout <= 0 {
		return
	}
	deadline := c.now().Add(-c.opts.IdleTimeout)
	c.dropWhere(ctx, func(_ K, e *entry) bool {
		// An entry being built or used right now is not idle.
		if !e.mu.TryLock() {
			return false
		}
		defer e.mu.Unlock()
		return e.lastUsed.Before(deadline)
	})
}

// Close drops every client, at shutdown.
func (c *Cache[K]) Close(ctx context.Context) {
	c.dropWhere(ctx, func(K, *entry) bool { return true })
}

// Len is the number of cached clients.
func (c *Cache[K]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

func (c *Cache[K]) dropWhere(ctx context.Context, match func(K, *entry) bool) {
	c.mu.Lock()
	var drop []*entry
	for k, e := range c.entries {
		if match(k, e) {
			drop = append(drop, e)
			delete(c.entries, k)
		}
	}
	c.mu.Unlock()
	for _, e := range drop {
		e.drop(ctx)
	}
}
