package vault

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	vault "github.com/hashicorp/vault/api"

	"github.com/eso-dev/eso/providers/plugin"
)

// session holds the Vault API client and its token.
//
// A token eso obtained by logging in is eso's: it is renewed before it
// expires while Vault allows (a renewal is one cheap call, a login may
// request a ServiceAccount token and costs Vault more), replaced by a new
// login when renewal is refused or the max TTL is reached, and revoked on
// Close. A token from tokenSecretRef belongs to the user: it is used as is,
// never renewed or revoked, and read again from its Secret once Vault has
// refused it.
type session struct {
	api *vault.Client
	// obtain gets a token: a login, or reading tokenSecretRef again.
	obtain func(context.Context) (*vault.SecretAuth, error)
	// owned: tokens come from a login, so eso renews and revokes them.
	owned bool

	mu        sync.Mutex
	valid     bool          // api holds a token Vault has not refused
	revocable bool          // eso's own token, and not a batch token
	ttl       time.Duration // granted at login; 0: the token does not expire
	expires   time.Time
	renewable bool
}

// refreshMargin is how long before expiry a token is renewed or replaced: a
// third of its TTL, at most a minute, so that a short TTL (10s) still serves
// reads for most of its life instead of causing a login per read.
func refreshMargin(ttl time.Duration) time.Duration {
	return min(ttl/3, time.Minute)
}

// client returns the API client with a usable token, renewing it or logging
// in when it is about to expire.
func (s *session) client(ctx context.Context) (*vault.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.valid && (s.ttl == 0 || time.Until(s.expires) > refreshMargin(s.ttl)) {
		return s.api, nil
	}
	if s.valid && s.renewable && s.renew(ctx) {
		return s.api, nil
	}
	if err := s.login(ctx); err != nil {
		return nil, err
	}
	return s.api, nil
}

// login obtains a new token. The caller holds s.mu.
func (s *session) login(ctx context.Context) error {
	s.valid = false
	requested := time.Now()
	auth, err := s.obtain(ctx)
	if err != nil {
		return err
	}
	if auth == nil || auth.ClientToken == "" {
		return fmt.Errorf("%w: Vault login returned no token", plugin.ErrInvalidConfig)
	}
	s.api.SetToken(auth.ClientToken)
	s.valid = true
	s.ttl = time.Duration(auth.LeaseDuration) * time.Second
	s.expires = requested.Add(s.ttl)
	s.renewable = s.owned && auth.Renewable && s.ttl > 0
	s.revocable = s.owned && !isBatchToken(auth.ClientToken)
	return nil
}

// renew extends the token by its TTL (auth/token/renew-self) and reports
// whether it is good for now. A renewal Vault caps at the token's max TTL
// is the last: the next refresh is a login. The caller holds s.mu.
func (s *session) renew(ctx context.Context) bool {
	requested := time.Now()
	secret, err := s.api.Auth().Token().RenewSelfWithContext(ctx, int(s.ttl/time.Second))
	if err != nil || secret == nil || secret.Auth == nil || secret.Auth.LeaseDuration <= 0 {
		s.renewable = false
		return false
	}
	granted := time.Duration(secret.Auth.LeaseDuration) * time.Second
	if granted < s.ttl {
		s.renewable = false
	}
	s.expires = requested.Add(granted)
	return true
}

// refused drops the token after Vault refused it, so the next call obtains
// a new one instead of failing until the token would have expired.
func (s *session) refused() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.valid = false
}

// isBatchToken: batch tokens ("hvb.", before Vault 1.10 "b.") cannot be
// revoked; they expire.
func isBatchToken(token string) bool {
	return strings.HasPrefix(token, "hvb.") || strings.HasPrefix(token, "b.")
}

// close revokes a token eso logged in for (auth/token/revoke-self); a
// user's token is left alone.
func (s *session) close(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.valid {
		return nil
	}
	s.valid = false
	if !s.revocable {
		return nil
	}
	// Close may run while a store's clients are being rebuilt: do not let an
	// unreachable Vault hold that up.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := s.api.Auth().Token().RevokeSelfWithContext(ctx, "")
	s.api.ClearToken()
	var re *vault.ResponseError
	if errors.As(err, &re) && tokenRefused(re) {
		return nil // expired or revoked already
	}
	if err != nil {
		return fmt.Errorf("revoking eso's Vault login token: %s", vaultMessage(err))
	}
	return nil
}
