package vault

import (
	"context"

	vault "github.com/hashicorp/vault/api"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// Session is a Vault API client with the login a configuration's auth
// describes, for packages that talk to Vault as this provider does (the
// VaultDynamicSecret generator): same TLS, namespace and login methods,
// and eso's VAULT_* environment ignored the same way.
type Session struct{ s *session }

// CheckCredentials resolves what spec's caBundle, caProvider and auth
// reference in namespace, without a client or a login: a configuration's
// validation.
func CheckCredentials(ctx context.Context, deps plugin.Deps, spec *provv1.VaultSpec, namespace string) error {
	return checkCredentials(ctx, deps, spec, namespace)
}

// NewSession builds the client for spec's server, namespace, caBundle,
// caProvider and auth (Path and Version are not used), resolving
// credentials in namespace only, at each login.
func NewSession(ctx context.Context, deps plugin.Deps, spec *provv1.VaultSpec, namespace string) (*Session, error) {
	s, err := newSession(ctx, deps, spec, namespace)
	if err != nil {
		return nil, err
	}
	return &Session{s: s}, nil
}

// Client returns the API client with a usable token, logging in first.
func (s *Session) Client(ctx context.Context) (*vault.Client, error) { return s.s.client(ctx) }

// Close revokes the token eso logged in for, never a token from
// tokenSecretRef. Vault revokes every lease and child token created with
// that token along with it.
func (s *Session) Close(ctx context.Context) error { return s.s.close(ctx) }

// RequestError classifies the error of a Vault API call; what names the
// call. A refused token wraps plugin.ErrAuthFailed, a path the token's
// policies do not allow plugin.ErrOutOfScope; anything else is transient.
// The message holds Vault's error list, which names paths and reasons,
// never secret data.
func RequestError(err error, what string) error { return kvError(err, what) }
