package vault

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	vault "github.com/hashicorp/vault/api"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
	"github.com/eso-dev/eso/tests/faultproxy"
)

// appRole enables AppRole with role eso (app-read policy, given token
// TTLs) and returns the auth configuration and its credentials.
func appRole(t *testing.T, root *vault.Client, ttl, maxTTL string) (provv1.VaultAuth, map[string]string) {
	t.Helper()
	if err := root.Sys().EnableAuthWithOptions("approle", &vault.EnableAuthOptions{Type: "approle"}); err != nil {
		t.Fatal(err)
	}
	if err := root.Sys().PutPolicy("app-read", `path "secret/data/app/*" { capabilities = ["read"] }`); err != nil {
		t.Fatal(err)
	}
	write(t, root, "auth/approle/role/eso", map[string]any{"token_policies": "app-read", "token_ttl": ttl, "token_max_ttl": maxTTL})
	roleID, err := root.Logical().Read("auth/approle/role/eso/role-id")
	if err != nil {
		t.Fatal(err)
	}
	secretID, err := root.Logical().Write("auth/approle/role/eso/secret-id", nil)
	if err != nil {
		t.Fatal(err)
	}
	auth := provv1.VaultAuth{AppRole: &provv1.VaultAppRole{
		RoleID: roleID.Data["role_id"].(string), SecretRef: provv1.SecretKeySelector{Name: "vault-creds", Key: "secret-id"}}}
	return auth, map[string]string{"secret-id": secretID.Data["secret_id"].(string)}
}

// tokenOf is the token the client currently uses.
func tokenOf(c plugin.SecretsClient) string { return c.(*Client).session.api.Token() }

func tokenWorks(root *vault.Client, token string) bool {
	_, err := root.Auth().Token().Lookup(token)
	return err == nil
}

func TestCloseRevokesOnlyLoginTokens(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	write(t, root, "secret/data/app/db", map[string]any{"data": map[string]any{"password": "pw"}})
	auth, creds := appRole(t, root, "1h", "2h")
	db := esv1.ExternalSecretDataRemoteRef{Key: "app/db", Property: "password"}

	c, err := newClient(t, provv1.VaultSpec{Server: root.Address(), Auth: auth}, creds)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSecret(ctx, db); err != nil {
		t.Fatal(err)
	}
	login := tokenOf(c)
	if !tokenWorks(root, login) {
		t.Fatal("login token does not work before Close")
	}
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if tokenWorks(root, login) {
		t.Error("login token still works after Close")
	}
	if err := c.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}

	// Batch tokens cannot be revoked: Close lets them expire, without error.
	write(t, root, "auth/approle/role/batch", map[string]any{"token_policies": "app-read", "token_type": "batch"})
	batchRoleID, err := root.Logical().Read("auth/approle/role/batch/role-id")
	if err != nil {
		t.Fatal(err)
	}
	batchSecretID, err := root.Logical().Write("auth/approle/role/batch/secret-id", nil)
	if err != nil {
		t.Fatal(err)
	}
	batchAuth := provv1.VaultAuth{AppRole: &provv1.VaultAppRole{RoleID: batchRoleID.Data["role_id"].(string), SecretRef: auth.AppRole.SecretRef}}
	c, err = newClient(t, provv1.VaultSpec{Server: root.Address(), Auth: batchAuth}, map[string]string{"secret-id": batchSecretID.Data["secret_id"].(string)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSecret(ctx, db); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Errorf("Close with a batch token: %v", err)
	}

	// A token from tokenSecretRef is the user's: Close leaves it alone.
	userToken, err := root.Auth().Token().Create(&vault.TokenCreateRequest{Policies: []string{"app-read"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err = newClient(t, provv1.VaultSpec{Server: root.Address(), Auth: tokenAuth()}, map[string]string{"token": userToken.Auth.ClientToken})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSecret(ctx, db); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !tokenWorks(root, userToken.Auth.ClientToken) {
		t.Error("Close revoked the user's token")
	}
}

// A short token TTL is served by renewals, then by a new login once the
// max TTL is reached: a bounded number of logins, not one per read.
func TestShortTTLRenewsInsteadOfLoggingInPerRead(t *testing.T) {
	if testing.Short() {
		t.Skip("reads for 14s")
	}
	ctx := context.Background()
	root := vaulttest.Start(t)
	write(t, root, "secret/data/app/db", map[string]any{"data": map[string]any{"password": "pw"}})
	auth, creds := appRole(t, root, "6s", "10s")
	proxy := faultproxy.Start(t, root.Address())
	c, err := newClient(t, provv1.VaultSpec{Server: proxy.URL, Auth: auth}, creds)
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	for end := time.Now().Add(14 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if _, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "app/db", Property: "password"}); err != nil {
			t.Fatalf("read %d: %v", reads, err)
		}
		reads++
	}
	logins, renewals := proxy.Requests("/v1/auth/approle/login"), proxy.Requests("/v1/auth/token/renew-self")
	t.Logf("%d reads, %d logins, %d renewals", reads, logins, renewals)
	// Login at 0s, renewals near 4s and 8s (the last capped at the 10s max
	// TTL), a new login near 8s, a renewal near 12s.
	if logins < 2 || logins > 3 || renewals < 1 || renewals > 5 {
		t.Errorf("%d logins and %d renewals over %d reads, want 2-3 logins and a few renewals", logins, renewals, reads)
	}
}

func TestCheckAuth(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	spec := provv1.VaultSpec{Server: root.Address(), Auth: tokenAuth()}
	check := func(spec provv1.VaultSpec, creds map[string]string) error {
		t.Helper()
		c, err := newClient(t, spec, creds)
		if err != nil {
			return err
		}
		return c.(plugin.AuthChecker).CheckAuth(ctx)
	}
	if err := check(spec, map[string]string{"token": vaulttest.RootToken}); err != nil {
		t.Errorf("CheckAuth with the root token: %v", err)
	}
	err := check(spec, map[string]string{"token": "hvs.not-a-token"})
	if !errors.Is(err, plugin.ErrAuthFailed) || strings.Contains(err.Error(), "not-a-token") {
		t.Errorf("CheckAuth with a wrong token: %v, want ErrAuthFailed without the token", err)
	}

	// A token without the default policy cannot look itself up, yet Vault
	// accepted it.
	bare, err := root.Auth().Token().Create(&vault.TokenCreateRequest{Policies: []string{"app-read"}, NoDefaultPolicy: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := check(spec, map[string]string{"token": bare.Auth.ClientToken}); err != nil {
		t.Errorf("CheckAuth with a token without lookup-self: %v", err)
	}

	auth, creds := appRole(t, root, "1h", "2h")
	approle := provv1.VaultSpec{Server: root.Address(), Auth: auth}
	if err := check(approle, creds); err != nil {
		t.Errorf("CheckAuth with AppRole: %v", err)
	}
	err = check(approle, map[string]string{"secret-id": "wrong-secret-id"})
	if !errors.Is(err, plugin.ErrAuthFailed) || strings.Contains(err.Error(), "wrong-secret-id") {
		t.Errorf("CheckAuth with a wrong secret ID: %v, want ErrAuthFailed without the secret ID", err)
	}
}

// A token revoked behind eso's back fails one call; the next logs in anew.
func TestRevokedLoginTokenIsReplaced(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	write(t, root, "secret/data/app/db", map[string]any{"data": map[string]any{"password": "pw"}})
	auth, creds := appRole(t, root, "1h", "2h")
	c, err := newClient(t, provv1.VaultSpec{Server: root.Address(), Auth: auth}, creds)
	if err != nil {
		t.Fatal(err)
	}
	db := esv1.ExternalSecretDataRemoteRef{Key: "app/db", Property: "password"}
	if _, err := c.GetSecret(ctx, db); err != nil {
		t.Fatal(err)
	}
	if err := root.Auth().Token().RevokeOrphan(tokenOf(c)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSecret(ctx, db); !errors.Is(err, plugin.ErrAuthFailed) {
		t.Errorf("read with a revoked token: %v, want ErrAuthFailed", err)
	}
	if got, err := c.GetSecret(ctx, db); err != nil || string(got) != "pw" {
		t.Errorf("read after the refusal = %q, %v; want a new login", got, err)
	}
}
