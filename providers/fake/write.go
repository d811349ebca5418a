package fake

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/eso-dev/eso/providers"
	"github.com/eso-dev/eso/providers/kit"
)

// Pushed secrets live in memory, per configuration (by UID, so a
// configuration deleted and created again starts empty), shared by every
// client of it, and are lost when eso restarts: Fake is for demos and tests.
// Keys written inline in the configuration are not eso's to overwrite.

// Bounds on what pushes may hold: Fake is a tenant's object like any other.
const (
	maxPushedKeys        = 256
	maxPushedBytes       = 2 << 20  // per configuration
	maxPushedBytesGlobal = 64 << 20 // over all configurations
)

var pushed = &pushedSecrets{byConfig: map[types.UID]map[string][]byte{}}

type pushedSecrets struct {
	mu       sync.Mutex
	byConfig map[types.UID]map[string][]byte
	total    int
}

func (p *pushedSecrets) get(config types.UID, key string) ([]byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.byConfig[config][key]
	return bytes.Clone(v), ok
}

// set writes (or, with value nil, deletes) key, within the bounds.
func (p *pushedSecrets) set(config types.UID, key string, value []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	secrets := p.byConfig[config]
	if secrets == nil {
		secrets = map[string][]byte{}
		p.byConfig[config] = secrets
	}
	old, had := secrets[key]
	size := 0
	for _, v := range secrets {
		size += len(v)
	}
	switch {
	case value != nil && !had && len(secrets) >= maxPushedKeys:
		return fmt.Errorf("%w: a Fake configuration holds at most %d pushed keys", providers.ErrTooLarge, maxPushedKeys)
	case size-len(old)+len(value) > maxPushedBytes:
		return fmt.Errorf("%w: a Fake configuration holds at most %d pushed bytes", providers.ErrTooLarge, maxPushedBytes)
	case p.total-len(old)+len(value) > maxPushedBytesGlobal:
		return fmt.Errorf("%w: Fake configurations hold at most %d pushed bytes together", providers.ErrTooLarge, maxPushedBytesGlobal)
	}
	p.total += len(value) - len(old)
	if value == nil {
		delete(secrets, key)
	} else {
		secrets[key] = value
	}
	return nil
}

// state: whether key exists, and whether a push made it (eso's).
func (c *Client) state(key string) (exists, managed bool) {
	if _, ok := pushed.get(c.config, key); ok {
		return true, true
	}
	_, inline := c.secrets[versionedKey{key, ""}]
	return inline, false
}

// PushSecret implements providers.Writer: the value, or one property of
// the JSON object held at the key.
func (c *Client) PushSecret(_ context.Context, req providers.PushRequest) error {
	if err := providers.NoPushMetadata(req, "Fake"); err != nil {
		return err
	}
	exists, managed := c.state(req.RemoteKey)
	if exists && !managed {
		// Inline keys are the configuration's: even adoption cannot take them.
		return fmt.Errorf("%w: key %q is written in the Fake configuration", providers.ErrNotManaged, req.RemoteKey)
	}
	value := req.Value
	if req.Property != "" {
		current, _ := pushed.get(c.config, req.RemoteKey)
		var err error
		if value, err = providers.SetProperty(current, req.Property, req.Value); err != nil {
			return err
		}
	}
	return pushed.set(c.config, req.RemoteKey, append([]byte{}, value...))
}

// DeleteSecret implements providers.Writer: only pushed keys; with a
// property, only that field (and the key when it was the last).
func (c *Client) DeleteSecret(ctx context.Context, remoteKey, property string) error {
	return kit.Deletion{
		Key: remoteKey, Property: property,
		State: func(context.Context) (bool, bool, error) {
			exists, managed := c.state(remoteKey)
			return exists, managed, nil
		},
		Current: func(context.Context) ([]byte, error) {
			v, _ := pushed.get(c.config, remoteKey)
			return v, nil
		},
		Rewrite: func(_ context.Context, rest []byte) error { return pushed.set(c.config, remoteKey, rest) },
		Delete:  func(context.Context) error { return pushed.set(c.config, remoteKey, nil) },
	}.Run(ctx)
}

// SecretExists implements providers.Writer.
func (c *Client) SecretExists(_ context.Context, remoteKey string) (bool, error) {
	exists, _ := c.state(remoteKey)
	return exists, nil
}
