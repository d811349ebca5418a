package stores

import (
	"context"
	"sync"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers"
)

// clientKey identifies clients that may be shared: same store, same scope.
type clientKey struct {
	storeKind, storeNamespace, storeName string
	scope                                providers.Scope
}

type clientEntry struct {
	mu          sync.Mutex
	fingerprint string
	client      *providers.SharedClient
	// forgotten is set once Forget has dropped the entry from the cache.
	forgotten bool
	// values caches provider answers (cachingPolicy Secrets or All) for the
	// same fingerprint; valuesFingerprint is the one it was made for.
	values            *valueCache
	valuesFingerprint string
}

// Values returns the answer cache of key for fingerprint, made with cfg; a
// new fingerprint starts an empty cache, and the old one's bytes go back to
// the shared budget.
func (c *ClientCache) Values(key clientKey, fingerprint string, cfg *ssv2.CacheConfig) *valueCache {
	e := c.lockedEntry(key)
	defer e.mu.Unlock()
	if e.values == nil || e.valuesFingerprint != fingerprint {
		if e.values != nil {
			e.values.clear()
		}
		e.values, e.valuesFingerprint = newValueCache(cfg, c.budget), fingerprint
	}
	return e.values
}

// ClientCache keeps one provider client per store and scope while the store
// and its provider configuration are unchanged, so a refresh does not log in to
// the provider again. A changed fingerprint replaces the client.
type ClientCache struct {
	mu      sync.Mutex
	entries map[clientKey]*clientEntry
	// budget bounds the bytes of all answer caches together.
	budget *valueBudget
}

// NewClientCache returns an empty cache.
func NewClientCache() *ClientCache {
	return &ClientCache{entries: map[clientKey]*clientEntry{}, budget: newValueBudget(maxCacheBytesTotal)}
}

// Get returns the cached client of key if its fingerprint matches, else builds
// one, and a release function the caller calls when done with it. Builds of
// different keys run in parallel; builds of one key do not.
func (c *ClientCache) Get(ctx context.Context, key clientKey, fingerprint string,
	build func(context.Context) (providers.SecretsClient, error)) (providers.SecretsClient, func(), error) {
	e := c.lockedEntry(key)
	shared, err := e.get(ctx, fingerprint, build)
	e.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	return shared.Client, shared.Releaser(ctx), nil
}

// lockedEntry returns key's entry, created if needed, with its lock held.
func (c *ClientCache) lockedEntry(key clientKey) *clientEntry {
	for {
		c.mu.Lock()
		e, ok := c.entries[key]
		if !ok {
			e = &clientEntry{}
			c.entries[key] = e
		}
		c.mu.Unlock()

		e.mu.Lock()
		if !e.forgotten {
			return e
		}
		// Forget removed the entry while we waited for it: start over rather
		// than build a client (or a cache) nobody would ever drop.
		e.mu.Unlock()
	}
}

// get returns the entry's client, acquired for the caller, rebuilding it when
// the fingerprint changed. The caller holds e.mu.
func (e *clientEntry) get(ctx context.Context, fingerprint string,
	build func(context.Context) (providers.SecretsClient, error)) (*providers.SharedClient, error) {
	if e.client != nil && e.fingerprint == fingerprint {
		e.client.Acquire()
		return e.client, nil
	}
	if e.client != nil {
		e.client.Retire(ctx)
		e.client = nil
	}
	cl, err := build(ctx)
	if err != nil {
		return nil, err
	}
	e.client, e.fingerprint = providers.NewSharedClient(cl), fingerprint
	e.client.Acquire()
	return e.client, nil
}

// Forget drops every client of a store, e.g. when it is deleted or its
// credentials were refused; each is closed once no sync uses it.
func (c *ClientCache) Forget(ctx context.Context, kind, namespace, name string) {
	c.forgetWhere(ctx, func(k clientKey) bool {
		return k.storeKind == kind && k.storeNamespace == namespace && k.storeName == name
	})
}

// ForgetScope drops every client a cluster store made for credentials of
// namespace: when a namespace goes, the clients of ClusterSecretStores with
// ManifestNamespace would otherwise stay until the store itself goes.
func (c *ClientCache) ForgetScope(ctx context.Context, namespace string) {
	c.forgetWhere(ctx, func(k clientKey) bool {
		return k.scope.Namespace == namespace && k.storeNamespace == ""
	})
}

func (c *ClientCache) forgetWhere(ctx context.Context, match func(clientKey) bool) {
	c.mu.Lock()
	var drop []*clientEntry
	for k, e := range c.entries {
		if match(k) {
			drop = append(drop, e)
			delete(c.entries, k)
		}
	}
	c.mu.Unlock()
	for _, e := range drop {
		e.mu.Lock()
		e.forgotten = true
		if e.client != nil {
			e.client.Retire(ctx)
			e.client = nil
		}
		if e.values != nil {
			e.values.clear()
			e.values = nil
		}
		e.mu.Unlock()
	}
}

// Len is the number of cached clients.
func (c *ClientCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
