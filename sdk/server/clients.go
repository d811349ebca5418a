package server

import (
	"time"

	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/plugin/clientcache"
)

// DefaultClientIdleTimeout is how long a provider client nobody uses is
// kept. It is longer than any sensible refresh interval, so a store that
// refreshes never logs in twice, while clients of deleted configurations or
// namespaces do not live for ever.
const DefaultClientIdleTimeout = time.Hour

// maxClients bounds the clients kept at once: callers name configurations
// and namespaces, so without a bound they decide how many logins eso holds.
// Beyond it the least recently used client goes; it costs a login, never
// a failed call.
const maxClients = 4096

// clientKey is what a client is bound to: a configuration and the namespace
// its credentials resolve in.
type clientKey struct {
	ref   plugin.Ref
	scope plugin.Scope
}

func newClientCache(idleTimeout time.Duration) *clientcache.Cache[clientKey] {
	return clientcache.New[clientKey](clientcache.Options{IdleTimeout: idleTimeout, MaxEntries: maxClients})
}

// ofConfig selects every client of a configuration, whatever its scope.
func ofConfig(ref plugin.Ref) func(clientKey) bool {
	return func(k clientKey) bool { return k.ref == ref }
}
