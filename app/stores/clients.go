package stores

import (
	"context"
	"sync"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/plugin/clientcache"
)

// maxClients bounds the provider clients core keeps at once (one per store
// and credentials namespace). Beyond it the least recently used client
// goes; it costs a login on its next use, never a failed sync.
const maxClients = 4096

// clientKey identifies clients that may be shared: same store, same scope.
type clientKey struct {
	storeKind, storeNamespace, storeName string
	scope                                plugin.Scope
}

// ClientCache keeps one provider client per store and scope while the store
// and its provider configuration are unchanged, so a refresh does not log in to
// the provider again; a changed fingerprint replaces the client. Beside each
// client it keeps the store's answer cache (cachingPolicy Secrets or All).
type ClientCache struct {
	clients *clientcache.Cache[clientKey]

	mu     sync.Mutex
	values map[clientKey]*valuesEntry
	// budget bounds the bytes of all answer caches together.
	budget *valueBudget
}

// valuesEntry is the answer cache of a key, made for one fingerprint.
type valuesEntry struct {
	cache       *valueCache
	fingerprint string
}

// NewClientCache returns an empty cache.
func NewClientCache() *ClientCache {
	return &ClientCache{
		clients: clientcache.New[clientKey](clientcache.Options{MaxEntries: maxClients}),
		values:  map[clientKey]*valuesEntry{},
		budget:  newValueBudget(maxCacheBytesTotal),
	}
}

// Get returns the cached client of key if its fingerprint matches, else builds
// one, and a release function the caller calls when done with it.
func (c *ClientCache) Get(ctx context.Context, key clientKey, fingerprint string,
	build func(context.Context) (plugin.SecretsClient, error)) (plugin.SecretsClient, func(), error) {
	return c.clients.Get(ctx, key, fingerprint, build)
}

// Values returns the answer cache of key for fingerprint, made with cfg; a
// new fingerprint starts an empty cache, and the old one's bytes go back to
// the shared budget.
func (c *ClientCache) Values(key clientKey, fingerprint string, cfg *ssv2.CacheConfig) *valueCache {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.values[key]
	if e == nil || e.fingerprint != fingerprint {
		if e != nil {
			e.cache.clear()
		}
		e = &valuesEntry{cache: newValueCache(cfg, c.budget), fingerprint: fingerprint}
		c.values[key] = e
	}
	return e.cache
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
	c.clients.ForgetWhere(ctx, match)
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.values {
		if match(k) {
			e.cache.clear()
			delete(c.values, k)
		}
	}
}

// Len is the number of cached clients.
func (c *ClientCache) Len() int { return c.clients.Len() }
