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
	"github.com/eso-dev/eso/providers"
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

// valueCache is a bounded LRU of provider answers with a TTL. It belongs to
// one store and scope, so one tenant's cache never grows past maxEntries.
type valueCache struct {
	mu      sync.Mutex
	ttl     time.Duration
	max     int
	now     func() time.Time
	order   *list.List // front: most recently used
	entries map[string]*list.Element
}

type cacheEntry struct {
	key     string
	value   any
	expires time.Time
}

func newValueCache(cfg *ssv2.CacheConfig) *valueCache {
	c := &valueCache{ttl: time.Minute, max: 100, now: time.Now, order: list.New(), entries: map[string]*list.Element{}}
	if cfg != nil {
		if cfg.TTL.Duration > 0 {
			c.ttl = cfg.TTL.Duration
		}
		if cfg.MaxEntries > 0 {
			c.max = int(cfg.MaxEntries)
		}
	}
	return c
}

func (c *valueCache) get(key string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if c.now().After(e.expires) {
		c.order.Remove(el)
		delete(c.entries, key)
		return nil, false
	}
	c.order.MoveToFront(el)
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

func (c *valueCache) put(key string, value any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		el.Value = &cacheEntry{key: key, value: value, expires: c.now().Add(c.ttl)}
		c.order.MoveToFront(el)
		return
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, value: value, expires: c.now().Add(c.ttl)})
	for c.order.Len() > c.max {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.entries, oldest.Value.(*cacheEntry).key)
	}
}

func (c *valueCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// cachingClient serves successful answers from a valueCache; errors are never
// cached, so a fixed remote secret is seen at the next sync.
// newCachingClient wraps c, keeping its providers.JSONProperties marker:
// without it core would read (and cache) a secret once per property.
func newCachingClient(c providers.SecretsClient, cache *valueCache) providers.SecretsClient {
	cc := &cachingClient{SecretsClient: c, cache: cache}
	if _, ok := c.(providers.JSONProperties); ok {
		return &cachingJSONClient{cc}
	}
	return cc
}

type cachingJSONClient struct{ *cachingClient }

// PropertiesAreJSONPaths implements providers.JSONProperties.
func (*cachingJSONClient) PropertiesAreJSONPaths() {}

type cachingClient struct {
	providers.SecretsClient
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
	if checker, ok := c.SecretsClient.(providers.AuthChecker); ok {
		return checker.CheckAuth(ctx)
	}
	return nil
}

// PushSecret, DeleteSecret and SecretExists are never cached.
func (c *cachingClient) PushSecret(ctx context.Context, req providers.PushRequest) error {
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

func writerOf(c providers.SecretsClient) (providers.Writer, error) {
	if w, ok := c.(providers.Writer); ok {
		return w, nil
	}
	return nil, fmt.Errorf("%w: this client does not write", providers.ErrNotSupported)
}
