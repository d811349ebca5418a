package vault

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"

	vault "github.com/hashicorp/vault/api"

	"github.com/eso-dev/eso/providers/plugin"
)

// Vault answers a request with a missing, expired or revoked token with 403
// and the errors "permission denied" and "invalid token"; a valid token that
// its policies do not allow on a path gets "permission denied" only.
func tokenRefused(re *vault.ResponseError) bool {
	if re.StatusCode == http.StatusUnauthorized {
		return true
	}
	if re.StatusCode != http.StatusForbidden {
		return false
	}
	for _, e := range re.Errors {
		if strings.Contains(e, "invalid token") {
			return true
		}
	}
	return false
}

// kvError classifies the error of a call on a KV path; what names the call
// (`reading secret "app/db"`). A refused token is ErrAuthFailed, a path the
// token's policies do not allow is ErrOutOfScope, anything else (5xx, 429,
// the network) is transient and carries no sentinel.
func kvError(err error, what string) error {
	if errors.Is(err, plugin.ErrTooLarge) {
		return fmt.Errorf("%s: %w", what, err)
	}
	var re *vault.ResponseError
	if errors.As(err, &re) {
		switch {
		case tokenRefused(re):
			return fmt.Errorf("%w: Vault refused the token %s: %s", plugin.ErrAuthFailed, what, vaultMessage(err))
		case re.StatusCode == http.StatusForbidden:
			return fmt.Errorf("%w: %s: %s", plugin.ErrOutOfScope, what, vaultMessage(err))
		}
	}
	return fmt.Errorf("%s: %s", what, vaultMessage(err))
}

// readError is kvError for reads, where 404 means the secret (or version)
// does not exist.
func readError(err error, key, version string) error {
	var re *vault.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: secret %q version %q", plugin.ErrSecretNotFound, key, version)
	}
	return kvError(err, fmt.Sprintf("reading secret %q", key))
}

// loginError classifies a failed login at auth/<mount>/login: Vault
// answering 4xx ("invalid role or secret ID", "invalid certificate",
// "permission denied") refused the credentials; 429, 5xx and network errors
// are transient.
func loginError(err error, mount string) error {
	if errors.Is(err, plugin.ErrTooLarge) {
		return fmt.Errorf("Vault login at auth/%s: %w", mount, err)
	}
	var re *vault.ResponseError
	if errors.As(err, &re) && re.StatusCode >= 400 && re.StatusCode < 500 && re.StatusCode != http.StatusTooManyRequests {
		return fmt.Errorf("%w: Vault refused the login at auth/%s: %s", plugin.ErrAuthFailed, mount, vaultMessage(err))
	}
	return fmt.Errorf("Vault login at auth/%s failed: %s", mount, vaultMessage(err))
}

// lookupError classifies a failed auth/token/lookup-self. A 403 without
// "invalid token" means Vault knows the token but its policies do not
// include lookup-self (no default policy): the identity is established.
func lookupError(err error) error {
	if errors.Is(err, plugin.ErrTooLarge) {
		return fmt.Errorf("checking the token (auth/token/lookup-self): %w", err)
	}
	var re *vault.ResponseError
	if errors.As(err, &re) {
		switch {
		case tokenRefused(re):
			return fmt.Errorf("%w: Vault refused the token (auth/token/lookup-self): %s", plugin.ErrAuthFailed, vaultMessage(err))
		case re.StatusCode == http.StatusForbidden:
			return nil
		}
	}
	return fmt.Errorf("checking the token (auth/token/lookup-self): %s", vaultMessage(err))
}

// vaultMessage keeps Vault's error list, which names paths and reasons, not
// secret data, on one line.
func vaultMessage(err error) string {
	var re *vault.ResponseError
	if errors.As(err, &re) {
		return strings.Join(strings.Fields(fmt.Sprintf("%d %s", re.StatusCode, strings.Join(re.Errors, "; "))), " ")
	}
	var unknownCA x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknownCA) || errors.As(err, &verify) {
		return err.Error() + " (is the server's CA in caBundle or caProvider?)"
	}
	return err.Error()
}
