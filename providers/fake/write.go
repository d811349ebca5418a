package fake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// Pushed secrets live in memory, per configuration (by UID, so a
// configuration deleted and created again starts empty), shared by every
// client of it, and are lost when eso restarts: Fake is for demos and tests.
// Keys written inline in the configuration are not eso's to overwrite.
//
// What a configuration pushed is released with it: when a configuration of
// the same name is built with another UID (it was replaced), and, when a
// push needs room, by a sweep that drops every configuration no longer
// there (at most one sweep per pruneEvery, reading eso's cache).

// Bounds on what pushes may hold: Fake is a tenant's object like any other,
// and one namespace may take at most an eighth of the whole.
const (
	maxPushedKeys              = 256
	maxPushedBytes             = 2 << 20  // per configuration
	maxPushedBytesPerNamespace = 8 << 20  // over a namespace's configurations
	maxPushedBytesGlobal       = 64 << 20 // over all configurations
	pruneEvery                 = time.Second
)

var pushed = newPushedSecrets()

// configIdentity is what a configuration is found by: its kind (Fake, or
// the v1 store kind that carries it inline), namespace and name.
type configIdentity struct {
	kind, namespace, name string
	owner                 types.UID // the v1 store's, for an inline configuration
}

// identityOf is the identity of cfg. A v1 store's inline configuration
// names the store as its owner (app/v1compat), and lives as long as it; it
// has the store's UID, which no Fake object a tenant creates can have (the
// API server gives each its own), so an owner reference written into a
// Fake object never passes for one.
func identityOf(cfg *provv1.Fake) configIdentity {
	for _, o := range cfg.OwnerReferences {
		if o.APIVersion != v1StoresGroupVersion || o.UID == "" || o.UID != cfg.UID {
			continue
		}
		switch o.Kind {
		case "SecretStore":
			return configIdentity{kind: o.Kind, namespace: cfg.Namespace, name: o.Name, owner: o.UID}
		case "ClusterSecretStore":
			return configIdentity{kind: o.Kind, name: o.Name, owner: o.UID}
		}
	}
	return configIdentity{kind: Kind, namespace: cfg.Namespace, name: cfg.Name}
}

// pushedConfig is what one configuration pushed.
type pushedConfig struct {
	id      configIdentity
	secrets map[string][]byte
	size    int
}

type pushedSecrets struct {
	mu          sync.Mutex
	byConfig    map[types.UID]*pushedConfig
	byIdentity  map[configIdentity]types.UID
	byNamespace map[string]int // bytes, by the namespace of the configurations
	total       int
	lastSweep   time.Time
	now         func() time.Time
}

func newPushedSecrets() *pushedSecrets {
	return &pushedSecrets{
		byConfig: map[types.UID]*pushedConfig{}, byIdentity: map[configIdentity]types.UID{},
		byNamespace: map[string]int{}, now: time.Now,
	}
}

func (p *pushedSecrets) get(config types.UID, key string) ([]byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.byConfig[config]
	if c == nil {
		return nil, false
	}
	v, ok := c.secrets[key]
	return bytes.Clone(v), ok
}

// seen records that the configuration id has the UID config: what another
// UID of the same identity pushed was a replaced configuration's, and goes.
func (p *pushedSecrets) seen(config types.UID, id configIdentity) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.byIdentity[id]; ok && old != config {
		p.release(old)
	}
}

// release drops what config pushed. The caller holds mu.
func (p *pushedSecrets) release(config types.UID) {
	c := p.byConfig[config]
	if c == nil {
		return
	}
	p.total -= c.size
	p.byNamespace[c.id.namespace] -= c.size
	if p.byNamespace[c.id.namespace] <= 0 {
		delete(p.byNamespace, c.id.namespace)
	}
	if p.byIdentity[c.id] == config {
		delete(p.byIdentity, c.id)
	}
	delete(p.byConfig, config)
}

// noRoom: a push past a bound shared with other configurations, which a
// sweep of configurations no longer there may make room for.
type noRoom struct{ err error }

func (e noRoom) Error() string { return e.err.Error() }
func (e noRoom) Unwrap() error { return e.err }

// set writes (or, with value nil, deletes) key, within the bounds. When a
// bound shared with other configurations is reached, configurations no
// longer there (live says which) are swept once and the write is tried again.
func (p *pushedSecrets) set(ctx context.Context, config types.UID, id configIdentity, key string, value []byte, live liveness) error {
	err := p.write(config, id, key, value)
	if !errors.As(err, new(noRoom)) || live == nil || !p.sweep(ctx, live) {
		return err
	}
	return p.write(config, id, key, value)
}

func (p *pushedSecrets) write(config types.UID, id configIdentity, key string, value []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.byConfig[config]
	old, had := []byte(nil), false
	size, keys := 0, 0
	if c != nil {
		old, had = c.secrets[key]
		size, keys = c.size, len(c.secrets)
	}
	grow := len(value) - len(old)
	switch {
	case value == nil && !had:
		return nil
	case value != nil && !had && keys >= maxPushedKeys:
		return fmt.Errorf("%w: a Fake configuration holds at most %d pushed keys", plugin.ErrTooLarge, maxPushedKeys)
	case size+grow > maxPushedBytes:
		return fmt.Errorf("%w: a Fake configuration holds at most %d pushed bytes", plugin.ErrTooLarge, maxPushedBytes)
	case grow > 0 && p.byNamespace[id.namespace]+grow > maxPushedBytesPerNamespace:
		return noRoom{fmt.Errorf("%w: the Fake configurations of a namespace hold at most %d pushed bytes together", plugin.ErrTooLarge, maxPushedBytesPerNamespace)}
	case grow > 0 && p.total+grow > maxPushedBytesGlobal:
		return noRoom{fmt.Errorf("%w: Fake configurations hold at most %d pushed bytes together", plugin.ErrTooLarge, maxPushedBytesGlobal)}
	}
	if c == nil {
		if old, ok := p.byIdentity[id]; ok && old != config {
			p.release(old) // a replaced configuration's
		}
		c = &pushedConfig{id: id, secrets: map[string][]byte{}}
		p.byConfig[config] = c
		p.byIdentity[id] = config
	}
	c.size += grow
	p.total += grow
	p.byNamespace[id.namespace] += grow
	if value == nil {
		delete(c.secrets, key)
	} else {
		c.secrets[key] = value
	}
	if len(c.secrets) == 0 {
		p.release(config)
	}
	return nil
}

// liveness says whether the configuration id of UID config is still there.
// An error keeps it.
type liveness func(ctx context.Context, config types.UID, id configIdentity) (bool, error)

// sweep releases what configurations no longer there pushed, at most once
// per pruneEvery; it reports whether it released anything. The lookups run
// without the lock.
func (p *pushedSecrets) sweep(ctx context.Context, live liveness) bool {
	p.mu.Lock()
	now := p.now()
	if now.Sub(p.lastSweep) < pruneEvery {
		p.mu.Unlock()
		return false
	}
	p.lastSweep = now
	ids := make(map[types.UID]configIdentity, len(p.byConfig))
	for uid, c := range p.byConfig {
		ids[uid] = c.id
	}
	p.mu.Unlock()
	var gone []types.UID
	for uid, id := range ids {
		if ok, err := live(ctx, uid, id); err == nil && !ok {
			gone = append(gone, uid)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, uid := range gone {
		p.release(uid)
	}
	return len(gone) > 0
}

// v1StoresGroupVersion is the API of the v1 stores that carry a Fake
// configuration inline. Named, not imported: Fake is in every build, the
// v1 layer is not (nov1).
const v1StoresGroupVersion = "external-secrets.io/v1"

// readerLiveness looks configurations up: a Fake configuration in r (eso's
// cache), or the v1 store carrying one inline, by its metadata, in direct
// (the API server, so that no informer is started for it; r when nil). It
// is there when an object of its name has its UID.
func readerLiveness(r, direct client.Reader) liveness {
	if r == nil {
		return nil
	}
	if direct == nil {
		direct = r
	}
	return func(ctx context.Context, config types.UID, id configIdentity) (bool, error) {
		var obj client.Object = &provv1.Fake{}
		reader, uid := r, config
		if id.kind == "SecretStore" || id.kind == "ClusterSecretStore" {
			store := &metav1.PartialObjectMetadata{}
			store.SetGroupVersionKind(schema.FromAPIVersionAndKind(v1StoresGroupVersion, id.kind))
			obj, reader, uid = store, direct, id.owner
		}
		err := reader.Get(ctx, client.ObjectKey{Namespace: id.namespace, Name: id.name}, obj)
		switch {
		case apierrors.IsNotFound(err):
			return false, nil
		case err != nil:
			return true, err
		}
		return obj.GetUID() == uid, nil
	}
}

// state: whether key exists, and whether a push made it (eso's).
func (c *Client) state(key string) (exists, managed bool) {
	if _, ok := pushed.get(c.config, key); ok {
		return true, true
	}
	_, inline := c.secrets[versionedKey{key, ""}]
	return inline, false
}

// PushSecret implements plugin.Writer: the value is stored as is under the
// key. A property is not read, as by upstream's Fake provider: reading the
// key back gives the value pushed, whatever property the entry names (two
// entries naming one key, the last pushed wins).
func (c *Client) PushSecret(ctx context.Context, req plugin.PushRequest) error {
	if err := kit.NoPushMetadata(req, "Fake"); err != nil {
		return err
	}
	exists, managed := c.state(req.RemoteKey)
	if exists && !managed {
		// Inline keys are the configuration's: even adoption cannot take them.
		return fmt.Errorf("%w: key %q is written in the Fake configuration", plugin.ErrNotManaged, req.RemoteKey)
	}
	return pushed.set(ctx, c.config, c.id, req.RemoteKey, bytes.Clone(req.Value), c.live)
}

// DeleteSecret implements plugin.Writer: only pushed keys, whole (a push
// stores no property, so none is deleted alone).
func (c *Client) DeleteSecret(ctx context.Context, remoteKey, _ string) error {
	return kit.Deletion{
		Key: remoteKey,
		State: func(context.Context) (bool, bool, error) {
			exists, managed := c.state(remoteKey)
			return exists, managed, nil
		},
		Delete: func(ctx context.Context) error { return pushed.set(ctx, c.config, c.id, remoteKey, nil, nil) },
	}.Run(ctx)
}

// SecretExists implements plugin.Writer.
func (c *Client) SecretExists(_ context.Context, remoteKey string) (bool, error) {
	exists, _ := c.state(remoteKey)
	return exists, nil
}
