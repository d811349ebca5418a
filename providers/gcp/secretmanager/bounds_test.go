package secretmanager

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

// TestAnswersAreBounded: the library would accept a 2 GiB message from an
// endpoint a tenant names; eso reads at most plugin.MaxResponseBytes and
// says so with ErrTooLarge, never the value. A find stops at the names
// listed and the secrets returned.
func TestAnswersAreBounded(t *testing.T) {
	ctx := context.Background()
	srv, c := newClient(t)
	srv.Add("projects/p/secrets/fits", []byte(strings.Repeat("x", plugin.MaxResponseBytes-1024)), nil)
	srv.Add("projects/p/secrets/big", []byte(strings.Repeat("x", plugin.MaxResponseBytes)), nil)

	if v, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "fits"}); err != nil || len(v) != plugin.MaxResponseBytes-1024 {
		t.Fatalf("a secret under the bound: %d bytes, %v", len(v), err)
	}
	_, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "big"})
	if !errors.Is(err, plugin.ErrTooLarge) || !strings.Contains(err.Error(), "2 MiB") || strings.Contains(err.Error(), "xxx") {
		t.Errorf("an oversized answer: %v, want ErrTooLarge naming 2 MiB and no value", err)
	}

	for i := range plugin.MaxFindResults + 1 {
		srv.Add(fmt.Sprintf("projects/p/secrets/many-%d", i), []byte("v"), map[string]string{"group": "many"})
	}
	_, err = c.GetAllSecrets(ctx, esv1.ExternalSecretFind{Tags: map[string]string{"group": "many"}})
	if !errors.Is(err, plugin.ErrTooLarge) || !strings.Contains(err.Error(), "secrets") {
		t.Errorf("find of %d secrets: %v, want ErrTooLarge", plugin.MaxFindResults+1, err)
	}
	for i := range plugin.MaxFindListed {
		srv.Add(fmt.Sprintf("projects/p/secrets/other-%d", i), []byte("v"), nil)
	}
	_, err = c.GetAllSecrets(ctx, esv1.ExternalSecretFind{Name: &esv1.FindName{RegExp: "^fits$"}})
	if !errors.Is(err, plugin.ErrTooLarge) || !strings.Contains(err.Error(), "names") {
		t.Errorf("find over %d secrets: %v, want ErrTooLarge", plugin.MaxFindListed, err)
	}
}
