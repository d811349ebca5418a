package grpcclient

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/eso-dev/eso/providers/plugin/wire"
)

// The server runs its own timer for the deadline it was sent; when that
// timer fires first it answers Canceled. The call still timed out, and says
// so. A caller that gave up itself still gets Canceled.
func TestCanceledPastTheDeadlineIsATimeout(t *testing.T) {
	opts := Options{CallTimeout: 20 * time.Millisecond, Backoff: time.Millisecond}
	serverGaveUp := func(ctx context.Context) (struct{}, error) {
		deadline, _ := ctx.Deadline()
		time.Sleep(time.Until(deadline) + time.Millisecond)
		return struct{}{}, status.Error(codes.Canceled, context.Canceled.Error())
	}
	_, err := invoke(context.Background(), opts, 1, serverGaveUp)
	if !errors.Is(err, wire.ErrUnavailable) || !strings.Contains(err.Error(), "DeadlineExceeded") {
		t.Errorf("Canceled after the deadline: %v, want %v (DeadlineExceeded)", err, wire.ErrUnavailable)
	}

	caller, giveUp := context.WithCancel(context.Background())
	callerGaveUp := func(context.Context) (struct{}, error) {
		giveUp()
		return struct{}{}, status.Error(codes.Canceled, context.Canceled.Error())
	}
	if _, err := invoke(caller, Options{CallTimeout: time.Hour}, 1, callerGaveUp); errors.Is(err, wire.ErrUnavailable) {
		t.Errorf("a call its caller cancelled: %v, want Canceled", err)
	}

	// The caller's own deadline passing is a timeout too, whichever timer
	// fired first.
	shortCaller, stop := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer stop()
	callerDeadline := func(ctx context.Context) (struct{}, error) {
		<-ctx.Done()
		time.Sleep(5 * time.Millisecond) // the caller's context has ended by now
		return struct{}{}, status.Error(codes.Canceled, context.Canceled.Error())
	}
	if _, err := invoke(shortCaller, Options{CallTimeout: time.Hour}, 1, callerDeadline); !errors.Is(err, wire.ErrUnavailable) {
		t.Errorf("Canceled after the caller's deadline: %v, want %v (DeadlineExceeded)", err, wire.ErrUnavailable)
	}

	beforeDeadline := func(context.Context) (struct{}, error) {
		return struct{}{}, status.Error(codes.Canceled, "the server cancelled")
	}
	if _, err := invoke(context.Background(), Options{CallTimeout: time.Hour}, 1, beforeDeadline); errors.Is(err, wire.ErrUnavailable) {
		t.Errorf("Canceled before the deadline: %v, want it as it came", err)
	}
}
