// Package grpcwire is what both ends of the provider protocol share: the
// conversion of the contract's requests and errors to and from their
// protocol form (apis/proto/provider/v1). The server (provider mode) and the
// client (core's remote adapter) use the same functions, so an error that
// crosses the wire is the error it was: providers.ErrSecretNotFound arrives
// as providers.ErrSecretNotFound.
package grpcwire

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
	"github.com/eso-dev/eso/providers"
)

// ErrUnavailable: the provider process could not be reached or did not
// answer in time. It is transient: core keeps the last verdict and retries.
var ErrUnavailable = errors.New("remote provider unavailable")

// reasons are the contract's errors with their protocol names and codes.
var reasons = []struct {
	err    error
	reason string
	code   codes.Code
}{
	// Most specific first: a property error is also a not-found.
	{providers.ErrPropertyNotFound, "PropertyNotFound", codes.NotFound},
	{providers.ErrSecretNotFound, "SecretNotFound", codes.NotFound},
	{providers.ErrConfigNotFound, "ConfigNotFound", codes.FailedPrecondition},
	{providers.ErrInvalidConfig, "InvalidConfig", codes.InvalidArgument},
	{providers.ErrNotSupported, "NotSupported", codes.Unimplemented},
	{providers.ErrAuthFailed, "AuthFailed", codes.Unauthenticated},
	{providers.ErrOutOfScope, "OutOfScope", codes.PermissionDenied},
	{providers.ErrNotManaged, "NotManaged", codes.FailedPrecondition},
}

// ToStatus turns a provider's error into the status the server returns. The
// message is the error's own (which never holds a value); the contract error
// it wraps travels as an ErrorReason detail.
func ToStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	code, reason := codes.Unknown, ""
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	}
	for _, r := range reasons {
		if errors.Is(err, r.err) {
			code, reason = r.code, r.reason
			break
		}
	}
	st := status.New(code, err.Error())
	if reason != "" {
		if withReason, dErr := st.WithDetails(&providerv1.ErrorReason{Reason: reason}); dErr == nil {
			st = withReason
		}
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
			for _, known := range reasons {
				if known.reason == r.Reason {
					return &remoteError{sentinel: known.err, msg: st.Message()}
				}
			}
		}
	}
	switch st.Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted:
		return fmt.Errorf("%w (%s): %s", ErrUnavailable, st.Code(), st.Message())
	case codes.Unauthenticated:
		return &remoteError{sentinel: providers.ErrAuthFailed, msg: st.Message()}
	case codes.PermissionDenied:
		return &remoteError{sentinel: providers.ErrOutOfScope, msg: st.Message()}
	case codes.Unimplemented:
		return &remoteError{sentinel: providers.ErrNotSupported, msg: st.Message()}
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
