package kit

import (
	"context"
	"encoding/json"
	"fmt"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

// JSONValues serves GetSecret and GetSecretMap of a backend whose secrets
// are values read whole by key and version, structured ones as JSON
// objects. A client embeds it and sets the reads:
//
//	c.JSONValues = JSONValues{Value: c.value, Metadata: c.tags}
//
// Properties are JSON paths (plugin.JSONProperties), so core reads each
// remote secret once per sync however many properties it needs.
type JSONValues struct {
	// Value reads key's raw value at version ("" for the current one). A
	// missing secret or version wraps plugin.ErrSecretNotFound.
	Value func(ctx context.Context, key, version string) ([]byte, error)
	// Metadata reads key's metadata (tags, labels, custom metadata) for
	// metadataPolicy Fetch; nil when the backend has none.
	Metadata func(ctx context.Context, key string) (map[string]string, error)
}

// GetSecret implements plugin.SecretsClient: the value, or with
// metadataPolicy Fetch the metadata as a JSON object, or one property (a
// JSON path) of either.
func (j JSONValues) GetSecret(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	value, err := j.read(ctx, ref)
	if err != nil || ref.Property == "" {
		return value, err
	}
	return Property(value, ref.Property)
}

func (j JSONValues) read(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	if ref.MetadataPolicy != esv1.MetadataPolicyFetch {
		return j.Value(ctx, ref.Key, ref.Version)
	}
	if j.Metadata == nil {
		return nil, fmt.Errorf("%w: this provider keeps no metadata (metadataPolicy Fetch, secret %q)", plugin.ErrNotSupported, ref.Key)
	}
	m, err := j.Metadata(ctx, ref.Key)
	if err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]string{}
	}
	return json.Marshal(m)
}

// GetSecretMap implements plugin.SecretsClient: the top-level fields of
// the JSON object GetSecret returns.
func (j JSONValues) GetSecretMap(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) (map[string][]byte, error) {
	value, err := j.GetSecret(ctx, ref)
	return FieldsOf(value, err, ref.Key)
}

// PropertiesAreJSONPaths implements plugin.JSONProperties.
func (JSONValues) PropertiesAreJSONPaths() {}
