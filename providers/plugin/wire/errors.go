// Package wire is what both ends of the provider protocol share: the
// conversion of the contract's requests and errors to and from their
// protocol form (apis/proto/provider/v1). The server (provider mode) and the
// client (core's remote adapter) use the same functions, so an error that
// crosses the wire is the error it was: plugin.ErrSecretNotFound arrives
// as plugin.ErrSecretNotFound.
package wire

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

// ErrUnavailable: the provider process could not be reached or did not
// answer in time. It is transient: core keeps the last verdict and retries.
var ErrUnavailable = fmt.Errorf("remote %w", plugin.ErrUnavailable)

// wireCodes are the gRPC codes of the error classes (plugin.Class) that
// cross the wire; the class itself travels as the ErrorReason detail, so an
// error arrives as the error it was. A client that does not know a class
// falls back on its code, so a new class never reads as a worse one.
var wireCodes = map[plugin.Class]codes.Code{
	plugin.ClassPropertyNotFound: codes.NotFound,
	plugin.ClassSecretNotFound:   codes.NotFound,
	plugin.ClassConfigNotFound:   codes.FailedPrecondition,
	plugin.ClassInvalidConfig:    codes.InvalidArgument,
	plugin.ClassTooLarge:         codes.Unimplemented,
	plugin.ClassNotSupported:     codes.Unimplemented,
	plugin.ClassAuthFailed:       codes.Unauthenticated,
	plugin.ClassOutOfScope:       codes.PermissionDenied,
	plugin.ClassNotManaged:       codes.FailedPrecondition,
	plugin.ClassThrottled:        codes.ResourceExhausted,
	plugin.ClassUnavailable:      codes.Unavailable,
}

// ToStatus turns a provider's error into the status the server returns. The
// message is the error's own (which never holds a value); its class travels
// as an ErrorReason detail.
func ToStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	}
	class := plugin.ClassOf(err)
	code, ok := wireCodes[class]
	if !ok {
		return status.Error(codes.Unknown, err.Error())
	}
	st := status.New(code, err.Error())
	if withReason, dErr := st.WithDetails(&providerv1.ErrorReason{Reason: string(class)}); dErr == nil {
		st = withReason
	}
	return st.Err()
}

// FromStatus turns a status the client received back into the contract's
// error, so core decides conditions and retries as for an in-process
// provider. Errors of the connection itself wrap ErrUnavailable.
func FromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	for _, d := range st.Details() {
		if r, ok := d.(*providerv1.ErrorReason); ok {
			class := plugin.Class(r.Reason)
			if _, known := wireCodes[class]; known && class != plugin.ClassUnavailable {
				return &remoteError{sentinel: class.Sentinel(), msg: st.Message()}
			}
		}
	}
	switch st.Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted:
		return fmt.Errorf("%w (%s): %s", ErrUnavailable, st.Code(), st.Message())
	case codes.Unauthenticated:
		return &remoteError{sentinel: plugin.ErrAuthFailed, msg: st.Message()}
	case codes.PermissionDenied:
		return &remoteError{sentinel: plugin.ErrOutOfScope, msg: st.Message()}
	case codes.Unimplemented:
		return &remoteError{sentinel: plugin.ErrNotSupported, msg: st.Message()}
	}
	return fmt.Errorf("remote provider: %s: %s", st.Code(), st.Message())
}

// remoteError is a contract error that crossed the wire: its message is the
// server's (which already names the sentinel), and errors.Is sees the
// sentinel.
type remoteError struct {
	sentinel error
	msg      string
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.sentinel }

// Retryable reports whether a call that failed with err may be retried as
// is: the provider was unreachable or overloaded, not wrong.
func Retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.ResourceExhausted, codes.Aborted:
		return true
	}
	return false
}
