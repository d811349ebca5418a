package externalsecret

import (
	"context"
	"fmt"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// memoClient reads each remote secret once per sync for clients whose
// properties are JSON paths (plugin.JSONProperties): three entries taking
// three properties of one secret cost one provider call, not three.
type memoClient struct {
	plugin.SecretsClient
	values map[rawRef]memoValue
}

type rawRef struct {
	key, version string
	metadata     esv1.MetadataPolicy
}

type memoValue struct {
	value []byte
	err   error
}

// memoize wraps c for one sync, if its properties are JSON paths.
func memoize(c plugin.SecretsClient) plugin.SecretsClient {
	if _, ok := c.(plugin.JSONProperties); !ok {
		return c
	}
	return &memoClient{SecretsClient: c, values: map[rawRef]memoValue{}}
}

// GetSecret reads the whole secret once and selects the property here.
func (m *memoClient) GetSecret(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	k := rawRef{key: ref.Key, version: ref.Version, metadata: ref.MetadataPolicy}
	v, ok := m.values[k]
	if !ok {
		whole := ref
		whole.Property = ""
		v.value, v.err = m.SecretsClient.GetSecret(ctx, whole)
		m.values[k] = v
	}
	if v.err != nil || ref.Property == "" {
		return v.value, v.err
	}
	return kit.Property(v.value, ref.Property)
}

// GetSecretMap splits the (memoized) secret into its fields.
func (m *memoClient) GetSecretMap(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) (map[string][]byte, error) {
	v, err := m.GetSecret(ctx, ref)
	if err != nil {
		return nil, err
	}
	fields, err := kit.FieldMap(v)
	if err != nil {
		return nil, fmt.Errorf("key %q: %w", ref.Key, err)
	}
	return fields, nil
}
