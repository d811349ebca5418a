// Package fake is a provider whose secrets are written inline in its
// configuration (kind Fake). It needs no SDK and is always compiled in; demos
// and tests use it.
package fake

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers"
)

// Kind is the configuration kind this provider serves.
const Kind = "Fake"

// Registration describes the provider to the registry.
var Registration = providers.Registration{
	Name:        "fake",
	Kind:        Kind,
	AddToScheme: provv1.AddToScheme,
	NewConfig:   func() client.Object { return &provv1.Fake{} },
	New:         func(d providers.Deps) providers.Provider { return New(d.Client) },
}

// Provider serves Fake configurations.
type Provider struct {
	reader client.Reader
}

// New returns a provider reading its configurations with reader.
func New(reader client.Reader) *Provider {
	return &Provider{reader: reader}
}

// Kind implements providers.Provider.
func (p *Provider) Kind() string { return Kind }

// Validate implements providers.Provider: every key may appear once per version.
func (p *Provider) Validate(ctx context.Context, ref providers.Ref, _ providers.Scope) error {
	cfg, err := p.config(ctx, ref)
	if err != nil {
		return err
	}
	_, err = index(cfg)
	return err
}

// NewClient implements providers.Provider. The client holds a snapshot of the
// configuration; core builds a new one when the configuration changes.
func (p *Provider) NewClient(ctx context.Context, ref providers.Ref, _ providers.Scope) (providers.SecretsClient, error) {
	cfg, err := p.config(ctx, ref)
	if err != nil {
		return nil, err
	}
	secrets, err := index(cfg)
	if err != nil {
		return nil, err
	}
	return &Client{secrets: secrets}, nil
}

func (p *Provider) config(ctx context.Context, ref providers.Ref) (*provv1.Fake, error) {
	var cfg provv1.Fake
	if err := providers.ReadConfig(ctx, p.reader, ref, &cfg); err != nil {
		return nil, err
	}
	return &cfg, nil
}

type versionedKey struct{ key, version string }

func index(cfg *provv1.Fake) (map[versionedKey][]byte, error) {
	secrets := make(map[versionedKey][]byte, len(cfg.Spec.Data))
	for _, d := range cfg.Spec.Data {
		k := versionedKey{d.Key, d.Version}
		if _, dup := secrets[k]; dup {
			return nil, fmt.Errorf("%w: key %q version %q is listed twice", providers.ErrInvalidConfig, d.Key, d.Version)
		}
		secrets[k] = []byte(d.Value)
	}
	return secrets, nil
}

// Client reads from a snapshot of a Fake configuration.
type Client struct {
	secrets map[versionedKey][]byte
}

// GetSecret implements providers.SecretsClient.
func (c *Client) GetSecret(_ context.Context, ref esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	if ref.MetadataPolicy == esv1.MetadataPolicyFetch {
		return nil, fmt.Errorf("%w: Fake secrets have no metadata (metadataPolicy Fetch)", providers.ErrNotSupported)
	}
	value, ok := c.secrets[versionedKey{ref.Key, ref.Version}]
	if !ok {
		return nil, fmt.Errorf("%w: key %q version %q", providers.ErrSecretNotFound, ref.Key, ref.Version)
	}
	if ref.Property == "" {
		return value, nil
	}
	return providers.Property(value, ref.Property)
}

// GetSecretMap implements providers.SecretsClient.
func (c *Client) GetSecretMap(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) (map[string][]byte, error) {
	value, err := c.GetSecret(ctx, ref)
	return providers.FieldsOf(value, err, ref.Key)
}

// GetAllSecrets implements providers.SecretsClient: the current version of
// every key the find's path and name select. Fake secrets have no tags.
func (c *Client) GetAllSecrets(_ context.Context, find esv1.ExternalSecretFind) (map[string][]byte, error) {
	if len(find.Tags) > 0 {
		return nil, fmt.Errorf("%w: Fake secrets have no tags (find.tags)", providers.ErrNotSupported)
	}
	match, err := providers.NameMatcher(find)
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

// PropertiesAreJSONPaths implements providers.JSONProperties.
func (c *Client) PropertiesAreJSONPaths() {}

// Capabilities implements providers.SecretsClient.
func (c *Client) Capabilities() providers.Capabilities { return providers.ReadOnly }

// Close implements providers.SecretsClient.
func (c *Client) Close(context.Context) error { return nil }
