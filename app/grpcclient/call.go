package grpcclient

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin/wire"
)

// invoke makes a call of at most attempts attempts, each bounded by
// CallTimeout, waiting Backoff (doubling) between them. Only what
// wire.Retryable allows is tried again: the provider was unreachable or
// overloaded, not wrong. The error is the contract's (wire.FromStatus).
func invoke[T any](ctx context.Context, opts Options, attempts int, call func(context.Context) (T, error)) (T, error) {
	wait := opts.Backoff
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, opts.CallTimeout)
		resp, err := call(actx)
		err = timedOut(ctx, actx, err)
		cancel()
		if tooLarge := kit.TooLargeMessage(err, MaxMessageSize); tooLarge != nil {
			return resp, tooLarge // the same answer again: not worth a retry
		}
		if err == nil || attempt >= attempts || !wire.Retryable(err) {
			return resp, wire.FromStatus(err)
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return resp, wire.FromStatus(err)
		}
		wait *= 2
	}
}

// timedOut reports a call that ended in Canceled after its deadline passed
// as what it is, DeadlineExceeded. The server starts its own timer for the
// deadline the client sends, and when that timer wins the race with the
// client's it cancels the call on its side and answers Canceled: the call
// still timed out, and is no more the caller's doing than a deadline seen
// here. A call its caller cancelled stays Canceled.
func timedOut(ctx, callCtx context.Context, err error) error {
	if status.Code(err) != codes.Canceled || errors.Is(ctx.Err(), context.Canceled) {
		return err
	}
	// The deadline, not callCtx.Err(): the context's own timer may not have
	// fired yet when the server's answer arrives.
	if deadline, ok := callCtx.Deadline(); !ok || time.Now().Before(deadline) {
		return err
	}
	return status.Error(codes.DeadlineExceeded, status.Convert(err).Message())
}
