package parameterstore

import (
	"errors"
	"testing"

	"github.com/eso-dev/eso/providers/plugin"
)

// TestMetadataCannotForgeOwnership: metadata may not set eso's own mark,
// nor a parameter type Parameter Store does not have.
func TestMetadataCannotForgeOwnership(t *testing.T) {
	for _, raw := range []string{`{"tags":{"managed-by":"external-secrets"}}`, `{"secretType":"Binary"}`} {
		if _, err := decodeMetadata([]byte(raw)); !errors.Is(err, plugin.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", raw, err)
		}
	}
}
