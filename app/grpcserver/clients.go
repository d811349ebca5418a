package grpcserver

import (
	"context"
	"sync"
	"time"

	"github.com/eso-dev/eso/providers"
)

// DefaultClientIdleTimeout is how long a provider client nobody uses is
// kept. It is longer than any sensible refresh interval, so a store that
// refreshes never logs in twice, while clients of deleted configurations or
// namespaces do not live for ever.
const DefaultClientIdleTimeout = time.Hour

// clientKey is what a client is bound to: a configuration and the namespace
// its credentials resolve in.
type clientKey struct {
	ref   providers.Ref
	scope providers.Scope
}

// clientCache keeps one provider client per configuration and scope while the
// configuration's fingerprint is unchanged, so a refresh costs no login. A
// replaced client is closed once the calls using it have finished, never in
// the middle of one (the rule of core's store client cache).
type clientCache struct {
	idleTimeout time.Duration
	now         func() time.Time

	mu      sync.Mutex
	entries map[clientKey]*clientEntry
}

type clientEntry struct {
	// mu serializes builds of one key: concurrent first requests cost one login.
	mu          sync.Mutex
	fingerprint string
	current     *providers.SharedClient
	lastUsed    time.Time
	// dropped is set once the entry left the cache; a caller that waited
	// for it starts over instead of building a client nobody would close.
	dropped bool
}

func newClientCache(idleTimeout time.Duration) *clientCache {
	return &clientCache{idleTimeout: idleTimeout, now: time.Now, entries: map[clientKey]*clientEntry{}}
}

// Get returns the client of key for fingerprint, building one if there is
// none or the fingerprint changed, and the function that releases it.
func (c *clientCache) Get(ctx context.Context, key clientKey, fingerprint string,
	build func(context.Context) (providers.SecretsClient, error)) (providers.SecretsClient, func(), error) {
	for {
		c.mu.Lock()
		e, ok := c.entries[key]
		if !ok {
			e = &clientEntry{}
			c.entries[key] = e
		}
		c.mu.Unlock()

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

// acquire returns the entry's client for fingerprint, replacing an outdated
// one. The caller holds e.mu.
func (e *clientEntry) acquire(ctx context.Context, fingerprint string,
	build func(context.Context) (providers.SecretsClient, error)) (*providers.SharedClient, error) {
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
	e.current, e.fingerprint = providers.NewSharedClient(cl), fingerprint
	e.current.Acquire()
	return e.current, nil
}

// Forget drops the client of key, e.g. after its credentials were refused,
// so the next request logs in afresh.
func (c *clientCache) Forget(ctx context.Context, key clientKey) {
	c.dropWhere(ctx, func(k clientKey, _ *clientEntry) bool { return k == key })
}

// ForgetConfig drops every client of a configuration, whatever its scope:
// the configuration is gone.
func (c *clientCache) ForgetConfig(ctx context.Context, ref providers.Ref) {
	c.dropWhere(ctx, func(k clientKey, _ *clientEntry) bool { return k.ref == ref })
}

// DropIdle drops the clients unused for longer than the idle timeout.
func (c *clientCache) DropIdle(ctx context.Context) {
	deadline := c.now().Add(-c.idleTimeout)
	c.dropWhere(ctx, func(_ clientKey, e *clientEntry) bool {
		// An entry being built or used right now is not idle.
		if !e.mu.TryLock() {
			return false
		}
		defer e.mu.Unlock()
		return e.lastUsed.Before(deadline)
	})
}

// Close drops every client, at shutdown.
func (c *clientCache) Close(ctx context.Context) {
	c.dropWhere(ctx, func(clientKey, *clientEntry) bool { return true })
}

// Len is the number of cached clients.
func (c *clientCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

func (c *clientCache) dropWhere(ctx context.Context, match func(clientKey, *clientEntry) bool) {
	c.mu.Lock()
	var drop []*clientEntry
	for k, e := range c.entries {
		if match(k, e) {
			drop = append(drop, e)
			delete(c.entries, k)
		}
	}
	c.mu.Unlock()
	for _, e := range drop {
		e.mu.Lock()
		e.dropped = true
		if e.current != nil {
			e.current.Retire(ctx)
			e.current = nil
		}
		e.mu.Unlock()
	}
}
