package wire

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/eso-dev/eso/providers/plugin"
)

// TestContractErrorsCrossTheWire: every contract error a provider returns
// arrives at core as the same error with the same message.
func TestContractErrorsCrossTheWire(t *testing.T) {
	for class, code := range wireCodes {
		t.Run(string(class), func(t *testing.T) {
			sent := fmt.Errorf("%w: secret %q", class.Sentinel(), "db")
			st := ToStatus(sent)
			if got := status.Code(st); got != code {
				t.Fatalf("code %s, want %s", got, code)
			}
			got := FromStatus(st)
			if plugin.ClassOf(got) != class {
				t.Fatalf("arrived as %q (%T), class %s, want %s", got, got, plugin.ClassOf(got), class)
			}
			if class != plugin.ClassUnavailable && got.Error() != sent.Error() {
				t.Fatalf("arrived as %q, want %q", got, sent)
			}
		})
	}
	prop := FromStatus(ToStatus(fmt.Errorf("%w: %w", plugin.ErrSecretNotFound, plugin.ErrPropertyNotFound)))
	if !errors.Is(prop, plugin.ErrPropertyNotFound) {
		t.Fatalf("a missing property arrived as %v", prop)
	}
}

func TestConnectionErrorsAreUnavailable(t *testing.T) {
	for _, code := range []codes.Code{codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted} {
		if err := FromStatus(status.Error(code, "x")); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s arrived as %v", code, err)
		}
	}
	if err := FromStatus(ToStatus(context.DeadlineExceeded)); !errors.Is(err, ErrUnavailable) {
		t.Errorf("a server-side deadline arrived as %v", err)
	}
	if !Retryable(status.Error(codes.Unavailable, "x")) || Retryable(status.Error(codes.NotFound, "x")) {
		t.Error("only transient codes are retryable")
	}
}
