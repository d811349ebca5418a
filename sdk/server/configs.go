package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eso-dev/eso/providers/plugin"
)

// DefaultConfigTTL is how long a configuration's fingerprint is trusted
// without asking the API server again. Provider mode has no informer cache;
// this keeps a busy store at one configuration read per TTL instead of one
// per request, at the price of noticing an edit up to TTL late.
const DefaultConfigTTL = 5 * time.Second

// configFingerprints remembers, for a few seconds, which version of each
// configuration object exists (UID and generation), or that it does not.
type configFingerprints struct {
	reader client.Reader
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[plugin.Ref]*fingerprintEntry
}

type fingerprintEntry struct {
	// mu is held while the object is read, so concurrent requests for one
	// configuration cost one read.
	mu          sync.Mutex
	fingerprint string
	err         error
	expires     time.Time
}

func newConfigFingerprints(reader client.Reader, ttl time.Duration) *configFingerprints {
	return &configFingerprints{reader: reader, ttl: ttl, now: time.Now, entries: map[plugin.Ref]*fingerprintEntry{}}
}

// Fingerprint identifies the current version of the configuration ref names;
// it changes when the spec changes or the object is replaced. A missing
// object is plugin.ErrConfigNotFound.
func (c *configFingerprints) Fingerprint(ctx context.Context, ref plugin.Ref, newConfig func() client.Object) (string, error) {
	c.mu.Lock()
	e, ok := c.entries[ref]
	if !ok {
		e = &fingerprintEntry{}
		c.entries[ref] = e
	}
	c.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if c.now().Before(e.expires) {
		return e.fingerprint, e.err
	}
	obj := newConfig()
	err := plugin.ReadConfig(ctx, c.reader, ref, obj)
	switch {
	case err == nil:
		// Generation, not resourceVersion: label or annotation edits must
		// not cost a new login.
		e.fingerprint, e.err = fmt.Sprintf("%s/%d", obj.GetUID(), obj.GetGeneration()), nil
	case errors.Is(err, plugin.ErrConfigNotFound):
		e.fingerprint, e.err = "", err
	default:
		// The API server may be briefly unreachable: ask again next time.
		return "", err
	}
	e.expires = c.now().Add(c.ttl)
	return e.fingerprint, e.err
}

// Sweep drops the entries that expired, so configurations nobody asks for
// any more are not remembered for ever.
func (c *configFingerprints) Sweep() {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for ref, e := range c.entries {
		if e.mu.TryLock() {
			if !now.Before(e.expires) {
				delete(c.entries, ref)
			}
			e.mu.Unlock()
		}
	}
}
