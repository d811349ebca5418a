package plugin

import (
	"context"
	"errors"
	"fmt"
)

// Class is what kind of failure an error is. It is eso's one error
// taxonomy: the gRPC wire carries it, metrics count by it, and core's
// controllers turn it into conditions and retries through one table
// (app/outcomes). Providers never return a Class; they wrap the sentinel
// errors, and ClassOf reads the class from those.
type Class string

// The classes, with the sentinel each is read from.
const (
	// ClassNone: no error.
	ClassNone Class = ""
	// ClassPropertyNotFound: ErrPropertyNotFound.
	ClassPropertyNotFound Class = "PropertyNotFound"
	// ClassSecretNotFound: ErrSecretNotFound.
	ClassSecretNotFound Class = "SecretNotFound"
	// ClassConfigNotFound: ErrConfigNotFound.
	ClassConfigNotFound Class = "ConfigNotFound"
	// ClassInvalidConfig: ErrInvalidConfig.
	ClassInvalidConfig Class = "InvalidConfig"
	// ClassTooLarge: ErrTooLarge, an answer beyond a bound.
	ClassTooLarge Class = "TooLarge"
	// ClassNotSupported: ErrNotSupported.
	ClassNotSupported Class = "NotSupported"
	// ClassAuthFailed: ErrAuthFailed.
	ClassAuthFailed Class = "AuthFailed"
	// ClassOutOfScope: ErrOutOfScope, permission denied.
	ClassOutOfScope Class = "OutOfScope"
	// ClassNotManaged: ErrNotManaged.
	ClassNotManaged Class = "NotManaged"
	// ClassIncompatible: ErrIncompatible.
	ClassIncompatible Class = "Incompatible"
	// ClassThrottled: ErrThrottled.
	ClassThrottled Class = "Throttled"
	// ClassUnavailable: ErrUnavailable, or a deadline that passed.
	ClassUnavailable Class = "Unavailable"
	// ClassUnknown: anything else (network errors, 5xx, the API server).
	ClassUnknown Class = "Unknown"
)

var (
	// ErrIncompatible: the provider process speaks no protocol version
	// core does, or does not serve the kind asked for.
	ErrIncompatible = errors.New("incompatible provider")
	// ErrThrottled: the provider asked eso to slow down (429, throttling,
	// quota).
	ErrThrottled = errors.New("throttled by the provider")
	// ErrUnavailable: the provider could not be reached or did not answer
	// in time.
	ErrUnavailable = errors.New("provider unavailable")
)

// classes maps sentinels to classes, most specific first: a property that
// is not found is also a secret not found, and too large is also not
// supported.
var classes = []struct {
	err   error
	class Class
}{
	{ErrPropertyNotFound, ClassPropertyNotFound},
	{ErrSecretNotFound, ClassSecretNotFound},
	{ErrConfigNotFound, ClassConfigNotFound},
	{ErrInvalidConfig, ClassInvalidConfig},
	{ErrTooLarge, ClassTooLarge},
	{ErrNotSupported, ClassNotSupported},
	{ErrAuthFailed, ClassAuthFailed},
	{ErrOutOfScope, ClassOutOfScope},
	{ErrNotManaged, ClassNotManaged},
	{ErrIncompatible, ClassIncompatible},
	{ErrThrottled, ClassThrottled},
	{ErrUnavailable, ClassUnavailable},
	{context.DeadlineExceeded, ClassUnavailable},
}

// ClassOf is err's class.
func ClassOf(err error) Class {
	if err == nil {
		return ClassNone
	}
	for _, c := range classes {
		if errors.Is(err, c.err) {
			return c.class
		}
	}
	return ClassUnknown
}

// Sentinel is the error a class is read from; nil for ClassNone and
// ClassUnknown. The gRPC client rebuilds errors with it.
func (c Class) Sentinel() error {
	for _, e := range classes {
		if e.class == c {
			return e.err
		}
	}
	return nil
}

// ErrCredentialsNotFound: a credentials Secret, or the key in it, does not
// exist (yet). It is an invalid configuration, but one that fixes itself
// when the Secret is created: the error names the Secret (Awaiting), core
// watches for it while the store waits, and checks again soon besides.
var ErrCredentialsNotFound = fmt.Errorf("%w", ErrInvalidConfig)
