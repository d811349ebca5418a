package kubernetes

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/eso-dev/eso/providers/plugin"
)

// apiNotFound: the API server said the object (a Secret) does not exist. An answer
// that is not the API's own (a proxy's or web server's 404 at a wrong
// server.url) is not: it must never make eso delete what it synced.
func apiNotFound(err error) bool {
	return apierrors.IsNotFound(err) && !apierrors.IsUnexpectedServerError(err)
}

// apiError maps the error of an API call to the provider contract's; what
// names the call ("reading Secret ns/name"). Only the API server's reason
// and code are kept, never its message, which a webhook or another
// cluster may fill with what was sent. A refused identity is ErrAuthFailed,
// a forbidden call ErrOutOfScope; an API server that is down, slow or
// overloaded is ErrUnavailable or ErrThrottled: transient, never a sign
// that a Secret is gone.
func apiError(err error, what string) error {
	if plugin.ClassOf(err) != plugin.ClassUnknown {
		// Ours already (a bound, a credential that could not be read).
		return fmt.Errorf("%s: %w", what, err)
	}
	var status apierrors.APIStatus
	isStatus := errors.As(err, &status)
	if isStatus && !apierrors.IsUnexpectedServerError(err) {
		return statusError(err, status, what)
	}
	if trustError(err) {
		return fmt.Errorf("%w: %s: the API server's certificate is not trusted (is its CA in server.caBundle or server.caProvider?): %v",
			plugin.ErrUnavailable, what, err)
	}
	if isStatus {
		return fmt.Errorf("%w: %s: the server answered HTTP %d, not as a Kubernetes API server (is server.url right?)",
			plugin.ErrUnavailable, what, status.Status().Code)
	}
	if netErr, ok := errors.AsType[net.Error](err); ok {
		return fmt.Errorf("%w: %s: %v", plugin.ErrUnavailable, what, netErr)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// statusError maps an answer of the API server itself.
func statusError(err error, status apierrors.APIStatus, what string) error {
	code := status.Status().Code
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%w: %s: the API server refused the credentials (expired, revoked or for another server)", plugin.ErrAuthFailed, what)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%w: %s is forbidden for this identity", plugin.ErrOutOfScope, what)
	case apierrors.IsTooManyRequests(err):
		return fmt.Errorf("%w: %s: the API server answered %d", plugin.ErrThrottled, what, code)
	case code >= 500 || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err):
		return fmt.Errorf("%w: %s: the API server answered %s (%d)", plugin.ErrUnavailable, what, apierrors.ReasonForError(err), code)
	}
	return fmt.Errorf("%s: the API server answered %s (%d)", what, apierrors.ReasonForError(err), code)
}

// trustError: the server's certificate did not verify against the CA
// trusted for it.
func trustError(err error) bool {
	_, unknown := errors.AsType[x509.UnknownAuthorityError](err)
	_, verify := errors.AsType[*tls.CertificateVerificationError](err)
	_, hostname := errors.AsType[x509.HostnameError](err)
	return unknown || verify || hostname
}

// refusedCredentials: the connection should read its credentials (and CA)
// again before its next call.
func refusedCredentials(err error) bool {
	return apierrors.IsUnauthorized(err) && !apierrors.IsUnexpectedServerError(err) || trustError(err)
}
