// Package fake is a provider whose secrets are written inline in its
// configuration (kind Fake). It needs no SDK and is always compiled in; demos
// and tests use it.
package fake

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// Kind is the configuration kind this provider serves.
const Kind = "Fake"

// Registration describes the provider to the registry. A client holds a
// snapshot of the configuration; core builds a new one when the
// configuration changes.
var Registration = plugin.Definition[*provv1.Fake]{
	Name: "fake", Kind: Kind,
	// Every key may appear once per version.
	Check: func(cfg *provv1.Fake) error {
		_, err := index(cfg)
		return err
	},
	NewClient: func(_ context.Context, deps plugin.Deps, cfg *provv1.Fake, _ plugin.Scope) (plugin.SecretsClient, error) {
		secrets, err := index(cfg)
		if err != nil {
			return nil, err
		}
		c := &Client{secrets: secrets, config: cfg.UID, id: identityOf(cfg), live: readerLiveness(deps.Client, deps.APIReader)}
		pushed.seen(c.config, c.id)
		c.JSONValues = kit.JSONValues{Value: c.value}
		return c, nil
	},
}.Registration()

type versionedKey struct{ key, version string }

func index(cfg *provv1.Fake) (map[versionedKey][]byte, error) {
	secrets := make(map[versionedKey][]byte, len(cfg.Spec.Data))
	for _, d := range cfg.Spec.Data {
		k := versionedKey{d.Key, d.Version}
		if _, dup := secrets[k]; dup {
			return nil, fmt.Errorf("%w: key %q version %q is listed twice", plugin.ErrInvalidConfig, d.Key, d.Version)
		}
		secrets[k] = []byte(d.Value)
	}
	return secrets, nil
}

// Client reads from a snapshot of a Fake configuration.
type Client struct {
	// JSONValues serves GetSecret and GetSecretMap from value; Fake secrets
	// have no metadata.
	kit.JSONValues
	secrets map[versionedKey][]byte
	// config identifies the configuration whose pushed secrets it shares.
	config types.UID
	// id finds the configuration, to tell whether it is still there.
	id   configIdentity
	live liveness
}

func (c *Client) value(_ context.Context, key, version string) ([]byte, error) {
	value, ok := c.secrets[versionedKey{key, version}]
	if !ok && version == "" {
		value, ok = pushed.get(c.config, key)
	}
	if !ok {
		return nil, fmt.Errorf("%w: key %q version %q", plugin.ErrSecretNotFound, key, version)
	}
	return value, nil
}

// GetAllSecrets implements plugin.SecretsClient: the current version of
// every key the find's path and name select. Fake secrets have no tags.
func (c *Client) GetAllSecrets(_ context.Context, find esv1.ExternalSecretFind) (map[string][]byte, error) {
	if len(find.Tags) > 0 {
		return nil, fmt.Errorf("%w: Fake secrets have no tags (find.tags)", plugin.ErrNotSupported)
	}
	match, err := kit.NameMatcher(find)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for k, v := range c.secrets {
		if k.version == "" && match(k.key) {
			out[k.key] = v
		}
	}
	return out, nil
}

// Capabilities implements plugin.SecretsClient: pushes are kept in
// memory (write.go).
func (c *Client) Capabilities() plugin.Capabilities { return plugin.ReadWrite }

// Close implements plugin.SecretsClient.
func (c *Client) Close(context.Context) error { return nil }
