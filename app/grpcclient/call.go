package grpcclient

import (
	"context"
	"time"

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
