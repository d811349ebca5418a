package grpcclient

import (
	"context"
	"errors"
	"strings"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

// TestAnswersAreBounded: a provider process (whose address a store names)
// cannot make core read a message past MaxMessageSize (4 MiB). The refusal
// is ErrTooLarge naming the bound, not "unavailable", and is not retried:
// the same answer would come back.
func TestAnswersAreBounded(t *testing.T) {
	f := newFixture(t, Options{})
	f.server.Set("fits", []byte(strings.Repeat("x", MaxMessageSize-1024)))
	f.server.Set("big", []byte(strings.Repeat("x", MaxMessageSize)))
	ctx := context.Background()
	cl := f.client()

	if v, err := cl.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "fits"}); err != nil || len(v) != MaxMessageSize-1024 {
		t.Fatalf("an answer under the bound: %d bytes, %v", len(v), err)
	}
	before := f.server.Calls("GetSecret")
	_, err := cl.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "big"})
	if !errors.Is(err, plugin.ErrTooLarge) || !strings.Contains(err.Error(), "4 MiB") || strings.Contains(err.Error(), "xxx") {
		t.Errorf("an oversized answer: %v, want ErrTooLarge naming 4 MiB and no value", err)
	}
	if calls := f.server.Calls("GetSecret") - before; calls != 1 {
		t.Errorf("the oversized answer was asked for %d times, want once", calls)
	}
}
