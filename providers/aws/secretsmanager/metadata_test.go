package secretsmanager

import (
	"errors"
	"testing"

	"github.com/eso-dev/eso/providers/plugin"
)

// TestMetadataCannotForgeOwnership: metadata may not set eso's own mark (a
// tenant would make any secret look eso's), nor an unknown push format.
func TestMetadataCannotForgeOwnership(t *testing.T) {
	for _, raw := range []string{`{"tags":{"managed-by":"external-secrets"}}`, `{"secretPushFormat":"yaml"}`} {
		if _, err := decodeMetadata([]byte(raw)); !errors.Is(err, plugin.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", raw, err)
		}
	}
	if md, err := decodeMetadata([]byte(`{"kmsKeyID":"k","secretPushFormat":"string"}`)); err != nil || md.KMSKeyID != "k" {
		t.Errorf("upstream's kmsKeyID spelling: %+v, %v", md, err)
	}
}
