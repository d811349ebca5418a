package vault

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	vault "github.com/hashicorp/vault/api"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
	"github.com/eso-dev/eso/tests/faultproxy"
)

func vaultErr(status int, errs ...string) error {
	return &vault.ResponseError{HTTPMethod: "GET", URL: "https://vault/v1/x", StatusCode: status, Errors: errs}
}

func TestErrorClassification(t *testing.T) {
	invalidToken := vaultErr(http.StatusForbidden, "2 errors occurred:\n\t* permission denied\n\t* invalid token\n\n")
	denied := vaultErr(http.StatusForbidden, "1 error occurred:\n\t* permission denied\n\n")
	for _, tc := range []struct {
		name string
		err  error
		want error // nil: no sentinel (transient) or, for lookup, accepted
	}{
		{"read, token refused", readError(invalidToken, "app/db", ""), plugin.ErrAuthFailed},
		{"read, 401", readError(vaultErr(http.StatusUnauthorized), "app/db", ""), plugin.ErrAuthFailed},
		{"read, policy denies", readError(denied, "app/db", ""), plugin.ErrOutOfScope},
		{"read, missing", readError(vaultErr(http.StatusNotFound), "app/db", ""), plugin.ErrSecretNotFound},
		{"read, 503", readError(vaultErr(http.StatusServiceUnavailable, "Vault is sealed"), "app/db", ""), nil},
		{"read, 429", readError(vaultErr(http.StatusTooManyRequests), "app/db", ""), nil},
		{"read, network", readError(errors.New("connection refused"), "app/db", ""), nil},
		{"write, token refused", kvError(invalidToken, `writing secret "a"`), plugin.ErrAuthFailed},
		{"write, policy denies", kvError(denied, `writing secret "a"`), plugin.ErrOutOfScope},
		{"login, wrong secret ID", loginError(vaultErr(http.StatusBadRequest, "invalid role or secret ID"), "approle"), plugin.ErrAuthFailed},
		{"login, wrong certificate", loginError(vaultErr(http.StatusBadRequest, "invalid certificate or no client certificate supplied"), "cert"), plugin.ErrAuthFailed},
		{"login, role binding", loginError(denied, "kubernetes"), plugin.ErrAuthFailed},
		{"login, 500", loginError(vaultErr(http.StatusInternalServerError), "approle"), nil},
		{"login, 429", loginError(vaultErr(http.StatusTooManyRequests), "approle"), nil},
		{"lookup, token refused", lookupError(invalidToken), plugin.ErrAuthFailed},
		{"lookup, no lookup-self capability", lookupError(denied), nil},
		{"lookup, 503", lookupError(vaultErr(http.StatusServiceUnavailable)), nil},
	} {
		for _, sentinel := range []error{plugin.ErrAuthFailed, plugin.ErrOutOfScope, plugin.ErrSecretNotFound} {
			if got := errors.Is(tc.err, sentinel); got != (sentinel == tc.want) {
				t.Errorf("%s: %v; errors.Is(%v) = %v", tc.name, tc.err, sentinel, got)
			}
		}
	}
	if err := lookupError(vaultErr(http.StatusServiceUnavailable)); err == nil {
		t.Error("lookup-self answered 503 counts as accepted")
	}
	if got := vaultMessage(invalidToken); got != "403 2 errors occurred: * permission denied * invalid token" {
		t.Errorf("message on one line: %q", got)
	}
}

// While Vault (here: a proxy in front of it) answers 503 or 429, reads fail;
// they never come back empty, which could read as "secret deleted".
func TestReadsFailDuringOutage(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	write(t, root, "secret/data/app/db", map[string]any{"data": map[string]any{"password": "pw"}})
	auth, creds := appRole(t, root, "1h", "2h")
	proxy := faultproxy.Start(t, root.Address())
	spec := provv1.VaultSpec{Server: proxy.URL, Auth: auth}
	c, err := newClient(t, spec, creds)
	if err != nil {
		t.Fatal(err)
	}
	db := esv1.ExternalSecretDataRemoteRef{Key: "app/db"}
	if _, err := c.GetSecret(ctx, db); err != nil {
		t.Fatal(err)
	}
	app := "app"
	// Each failing call takes a few seconds: the Vault client retries.
	proxy.Fail(vaulttest.Outage(http.StatusServiceUnavailable))
	if v, err := c.GetSecret(ctx, db); err == nil || errors.Is(err, plugin.ErrSecretNotFound) {
		t.Errorf("GetSecret = %q, %v; want a transient error", v, err)
	}
	if m, err := c.GetSecretMap(ctx, db); err == nil || errors.Is(err, plugin.ErrSecretNotFound) {
		t.Errorf("GetSecretMap = %q, %v; want a transient error", m, err)
	}
	if m, err := c.GetAllSecrets(ctx, esv1.ExternalSecretFind{Path: &app}); err == nil {
		t.Errorf("GetAllSecrets = %q, want an error", m)
	}
	if err := c.(plugin.AuthChecker).CheckAuth(ctx); err == nil || errors.Is(err, plugin.ErrAuthFailed) {
		t.Errorf("CheckAuth: %v, want a transient error", err)
	}
	proxy.Fail(vaulttest.Outage(http.StatusTooManyRequests))
	if v, err := c.GetSecret(ctx, db); err == nil || errors.Is(err, plugin.ErrSecretNotFound) {
		t.Errorf("429: GetSecret = %q, %v; want a transient error", v, err)
	}
	// A login while Vault cannot answer is not a refusal of the credentials.
	fresh, err := newClient(t, spec, creds)
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.(plugin.AuthChecker).CheckAuth(ctx); err == nil || errors.Is(err, plugin.ErrAuthFailed) {
		t.Errorf("429: login: %v, want a transient error", err)
	}
	proxy.Pass()
	// The outage did not cost the client its token.
	logins := proxy.Requests("/v1/auth/approle/login")
	if got, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "app/db", Property: "password"}); err != nil || string(got) != "pw" {
		t.Errorf("after the outage = %q, %v", got, err)
	}
	if proxy.Requests("/v1/auth/approle/login") != logins {
		t.Error("the client logged in again after an outage")
	}
}

func TestRefreshMargin(t *testing.T) {
	for ttl, want := range map[time.Duration]time.Duration{
		10 * time.Second: 10 * time.Second / 3,
		time.Hour:        time.Minute,
	} {
		if got := refreshMargin(ttl); got != want {
			t.Errorf("refreshMargin(%v) = %v, want %v", ttl, got, want)
		}
	}
}
