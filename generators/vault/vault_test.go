package vault

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
	"github.com/eso-dev/eso/tests/faultproxy"
)

// These tests run against a real Vault dev server (VAULT_BIN).

var (
	ref   = plugin.Ref{Kind: Kind, Namespace: "team", Name: "gen"}
	scope = plugin.Scope{Namespace: "team"}
)

// newGenerator serves spec as VaultDynamicSecret team/gen, with Secret
// vault-creds of namespace team holding creds.
func newGenerator(t *testing.T, spec genv1.VaultDynamicSecretSpec, creds map[string]string) plugin.Generator {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = genv1.AddToScheme(scheme)
	cfg := &genv1.VaultDynamicSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "gen"}, Spec: spec}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "vault-creds"}, Data: map[string][]byte{}}
	for k, v := range creds {
		secret.Data[k] = []byte(v)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cfg, secret).Build()
	return Registration.NewGenerator(plugin.Deps{Client: c, APIReader: c})
}

func rootTokenAuth() (provv1.VaultAuth, map[string]string) {
	return provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault-creds", Key: "token"}},
		map[string]string{"token": vaulttest.RootToken}
}

func params(t *testing.T, m map[string]any) map[string]apiextensionsv1.JSON {
	t.Helper()
	out := map[string]apiextensionsv1.JSON{}
	for k, v := range m {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = apiextensionsv1.JSON{Raw: raw}
	}
	return out
}

func write(t *testing.T, root *vaultapi.Client, path string, data map[string]any) *vaultapi.Secret {
	t.Helper()
	s, err := root.Logical().Write(path, data)
	if err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
	return s
}

// enablePKI mounts a PKI engine whose role app attaches leases to the
// certificates it issues (generate_lease), so revoking the lease revokes
// the certificate.
func enablePKI(t *testing.T, root *vaultapi.Client) {
	t.Helper()
	if err := root.Sys().Mount("pki", &vaultapi.MountInput{Type: "pki"}); err != nil {
		t.Fatal(err)
	}
	write(t, root, "pki/root/generate/internal", map[string]any{"common_name": "example.com", "ttl": "24h"})
	write(t, root, "pki/roles/app", map[string]any{"allowed_domains": "example.com", "allow_subdomains": true, "generate_lease": true, "max_ttl": "1h"})
}

func certificateRevoked(t *testing.T, root *vaultapi.Client, serial string) bool {
	t.Helper()
	s, err := root.Logical().Read("pki/cert/" + serial)
	if err != nil || s == nil {
		t.Fatalf("reading certificate %s: %v", serial, err)
	}
	n, _ := s.Data["revocation_time"].(json.Number)
	return n.String() != "0"
}

func leaseExists(root *vaultapi.Client, leaseID string) bool {
	_, err := root.Sys().Lookup(leaseID)
	return err == nil
}

func tokenWorks(root *vaultapi.Client, token string) bool {
	_, err := root.Auth().Token().Lookup(token)
	return err == nil
}

func stateOfJSON(t *testing.T, raw plugin.State) State {
	t.Helper()
	var s State
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("state %s: %v", raw, err)
	}
	return s
}

// assertNotIn fails if any generated value appears in text (a state or an
// error message).
func assertNotIn(t *testing.T, what, text string, values map[string][]byte) {
	t.Helper()
	for k, v := range values {
		if len(v) >= 8 && strings.Contains(text, string(v)) {
			t.Errorf("%s holds the value of %q", what, k)
		}
	}
}

// TestRequestWithoutLeaseHasNoState: a POST to sys/tools/random issues
// nothing revocable.
func TestRequestWithoutLeaseHasNoState(t *testing.T) {
	root := vaulttest.Start(t)
	auth, creds := rootTokenAuth()
	g := newGenerator(t, genv1.VaultDynamicSecretSpec{Server: root.Address(), Auth: &auth,
		Path: "sys/tools/random/16", Method: "POST", Parameters: params(t, map[string]any{"format": "hex"})}, creds)
	values, state, err := g.Generate(context.Background(), ref, scope)
	if err != nil {
		t.Fatal(err)
	}
	if len(values["random_bytes"]) != 32 {
		t.Errorf("random_bytes = %q, want 16 bytes in hex", values["random_bytes"])
	}
	if state != nil {
		t.Errorf("state %s for a response without lease or token", state)
	}
}

// TestLeaseIsRevokedByCleanup issues a PKI certificate with a lease: the
// state holds the lease ID and none of the values, and Cleanup revokes the
// lease and with it the certificate; a second Cleanup succeeds.
func TestLeaseIsRevokedByCleanup(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	enablePKI(t, root)
	auth, creds := rootTokenAuth()
	g := newGenerator(t, genv1.VaultDynamicSecretSpec{Server: root.Address(), Auth: &auth,
		Path: "pki/issue/app", Method: "POST", Parameters: params(t, map[string]any{"common_name": "a.example.com", "ttl": "10m"})}, creds)
	values, raw, err := g.Generate(ctx, ref, scope)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"certificate", "private_key", "serial_number", "ca_chain", "expiration"} {
		if len(values[k]) == 0 {
			t.Errorf("output lacks %q (keys: %v)", k, keys(values))
		}
	}
	if !strings.HasPrefix(string(values["ca_chain"]), `["-----BEGIN CERTIFICATE-----`) {
		t.Errorf("ca_chain is not written as a JSON list: %.40q", values["ca_chain"])
	}
	state := stateOfJSON(t, raw)
	if !strings.HasPrefix(state.LeaseID, "pki/issue/app/") || state.TokenAccessor != "" {
		t.Fatalf("state %s, want the certificate's lease", raw)
	}
	assertNotIn(t, "state", string(raw), values)
	serial := string(values["serial_number"])
	if certificateRevoked(t, root, serial) || !leaseExists(root, state.LeaseID) {
		t.Fatal("the certificate's lease is revoked before Cleanup")
	}

	if err := g.Cleanup(ctx, ref, scope, raw); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	if !certificateRevoked(t, root, serial) || leaseExists(root, state.LeaseID) {
		t.Error("Cleanup left the lease and the certificate valid")
	}
	if err := g.Cleanup(ctx, ref, scope, raw); err != nil {
		t.Errorf("second Cleanup of a revoked lease: %v", err)
	}
}

// TestIssuedTokenIsRevokedByCleanup creates a token with resultType Auth:
// the output is the auth block, the state its accessor, and after Cleanup
// the token no longer works.
func TestIssuedTokenIsRevokedByCleanup(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	auth, creds := rootTokenAuth()
	g := newGenerator(t, genv1.VaultDynamicSecretSpec{Server: root.Address(), Auth: &auth,
		Path: "auth/token/create", Method: "POST", ResultType: genv1.VaultResultAuth,
		Parameters: params(t, map[string]any{"policies": []string{"default"}, "ttl": "1h"})}, creds)
	values, raw, err := g.Generate(ctx, ref, scope)
	if err != nil {
		t.Fatal(err)
	}
	token := string(values["client_token"])
	if !tokenWorks(root, token) {
		t.Fatalf("generated token does not work (keys: %v)", keys(values))
	}
	if string(values["lease_duration"]) != "3600" || string(values["renewable"]) != "true" || string(values["policies"]) != `["default"]` {
		t.Errorf("non-string fields are not JSON: lease_duration %s, renewable %s, policies %s", values["lease_duration"], values["renewable"], values["policies"])
	}
	state := stateOfJSON(t, raw)
	if state.TokenAccessor != string(values["accessor"]) || state.LeaseID != "" {
		t.Fatalf("state %s, want the token's accessor", raw)
	}
	if strings.Contains(string(raw), token) {
		t.Fatal("state holds the token")
	}

	if err := g.Cleanup(ctx, ref, scope, raw); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	if tokenWorks(root, token) {
		t.Error("the token works after Cleanup")
	}
	if err := g.Cleanup(ctx, ref, scope, raw); err != nil {
		t.Errorf("second Cleanup of a revoked token: %v", err)
	}
}

// TestLoginTokenLivesAsLongAsWhatItLeased logs in with AppRole. Revoking
// the login token would revoke the leases created with it, so it is kept
// when the response leased something and revoked when it did not.
func TestLoginTokenLivesAsLongAsWhatItLeased(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	enablePKI(t, root)
	if err := root.Sys().EnableAuthWithOptions("approle", &vaultapi.EnableAuthOptions{Type: "approle"}); err != nil {
		t.Fatal(err)
	}
	if err := root.Sys().PutPolicy("issue", `
path "pki/issue/app" { capabilities = ["update"] }
path "sys/tools/random/*" { capabilities = ["update"] }
path "sys/leases/revoke" { capabilities = ["update"] }`); err != nil {
		t.Fatal(err)
	}
	write(t, root, "auth/approle/role/eso", map[string]any{"token_policies": "issue", "token_ttl": "1h"})
	roleID, err := root.Logical().Read("auth/approle/role/eso/role-id")
	if err != nil {
		t.Fatal(err)
	}
	secretID := write(t, root, "auth/approle/role/eso/secret-id", nil)
	auth := provv1.VaultAuth{AppRole: &provv1.VaultAppRole{RoleID: roleID.Data["role_id"].(string),
		SecretRef: provv1.SecretKeySelector{Name: "vault-creds", Key: "secret-id"}}}
	creds := map[string]string{"secret-id": secretID.Data["secret_id"].(string)}
	logins := func() int {
		s, err := root.Logical().List("auth/token/accessors")
		if err != nil {
			t.Fatal(err)
		}
		return len(s.Data["keys"].([]any))
	}
	before := logins()

	random := newGenerator(t, genv1.VaultDynamicSecretSpec{Server: root.Address(), Auth: &auth,
		Path: "sys/tools/random/8", Method: "POST"}, creds)
	if _, state, err := random.Generate(ctx, ref, scope); err != nil || state != nil {
		t.Fatalf("Generate = state %s, %v", state, err)
	}
	if n := logins(); n != before {
		t.Errorf("%d tokens after a generation that leased nothing, want the login revoked (%d)", n, before)
	}

	pki := newGenerator(t, genv1.VaultDynamicSecretSpec{Server: root.Address(), Auth: &auth,
		Path: "pki/issue/app", Method: "PUT", Parameters: params(t, map[string]any{"common_name": "b.example.com"})}, creds)
	values, raw, err := pki.Generate(ctx, ref, scope)
	if err != nil {
		t.Fatal(err)
	}
	state := stateOfJSON(t, raw)
	if !leaseExists(root, state.LeaseID) || certificateRevoked(t, root, string(values["serial_number"])) {
		t.Fatal("the lease did not outlive Generate")
	}
	if err := pki.Cleanup(ctx, ref, scope, raw); err != nil {
		t.Fatal(err)
	}
	if leaseExists(root, state.LeaseID) {
		t.Error("lease not revoked by Cleanup")
	}
}

// TestResultTypesAndQueryParameters reads KV v1 with GET: Data is the
// secret's fields, Raw the whole response; neither has a lease ID, so
// there is no state even though KV reports a lease duration.
func TestResultTypesAndQueryParameters(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	if err := root.Sys().Mount("kv", &vaultapi.MountInput{Type: "kv", Options: map[string]string{"version": "1"}}); err != nil {
		t.Fatal(err)
	}
	write(t, root, "kv/app", map[string]any{"user": "app", "port": 5432, "ttl": "30m", "tags": []string{"a"}})
	auth, creds := rootTokenAuth()

	values, state, err := newGenerator(t, genv1.VaultDynamicSecretSpec{Server: root.Address(), Auth: &auth, Path: "/kv/app/"}, creds).Generate(ctx, ref, scope)
	if err != nil {
		t.Fatal(err)
	}
	if string(values["user"]) != "app" || string(values["port"]) != "5432" || string(values["tags"]) != `["a"]` || state != nil {
		t.Errorf("Data = %q, state %s", values, state)
	}

	values, state, err = newGenerator(t, genv1.VaultDynamicSecretSpec{Server: root.Address(), Auth: &auth, Path: "kv/app",
		ResultType: genv1.VaultResultRaw}, creds).Generate(ctx, ref, scope)
	if err != nil {
		t.Fatal(err)
	}
	if string(values["lease_duration"]) != "1800" || !strings.Contains(string(values["data"]), `"user":"app"`) || state != nil {
		t.Errorf("Raw = %q, state %s", values, state)
	}

	// GET parameters go into the query: KV v2's version selects the first write.
	write(t, root, "secret/data/app", map[string]any{"data": map[string]any{"v": "1"}})
	write(t, root, "secret/data/app", map[string]any{"data": map[string]any{"v": "2"}})
	values, _, err = newGenerator(t, genv1.VaultDynamicSecretSpec{Server: root.Address(), Auth: &auth, Path: "secret/data/app",
		Parameters: params(t, map[string]any{"version": 1})}, creds).Generate(ctx, ref, scope)
	if err != nil {
		t.Fatal(err)
	}
	if string(values["data"]) != `{"v":"1"}` {
		t.Errorf("version 1 = %s", values["data"])
	}

	// Auth on a response without one.
	_, _, err = newGenerator(t, genv1.VaultDynamicSecretSpec{Server: root.Address(), Auth: &auth, Path: "kv/app",
		ResultType: genv1.VaultResultAuth}, creds).Generate(ctx, ref, scope)
	if err == nil || !strings.Contains(err.Error(), "has no auth") {
		t.Errorf("resultType Auth without auth block: %v", err)
	}
	values, _, err = newGenerator(t, genv1.VaultDynamicSecretSpec{Server: root.Address(), Auth: &auth, Path: "kv/app",
		ResultType: genv1.VaultResultAuth, AllowEmptyResponse: true}, creds).Generate(ctx, ref, scope)
	if err != nil || len(values) != 0 {
		t.Errorf("allowEmptyResponse: %q, %v", values, err)
	}
}

// TestGetParametersAndList: getParameters go into a GET's query (upstream's
// field); LIST answers the keys under a path.
func TestGetParametersAndList(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	auth, creds := rootTokenAuth()
	write(t, root, "secret/data/app", map[string]any{"data": map[string]any{"v": "1"}})
	write(t, root, "secret/data/app", map[string]any{"data": map[string]any{"v": "2"}})
	write(t, root, "secret/data/dir/a", map[string]any{"data": map[string]any{"x": "y"}})
	write(t, root, "secret/data/dir/b", map[string]any{"data": map[string]any{"x": "y"}})

	values, _, err := newGenerator(t, genv1.VaultDynamicSecretSpec{Server: root.Address(), Auth: &auth, Path: "secret/data/app",
		GetParameters: map[string]genv1.VaultQueryValues{"version": {"1"}}}, creds).Generate(ctx, ref, scope)
	if err != nil {
		t.Fatal(err)
	}
	if string(values["data"]) != `{"v":"1"}` {
		t.Errorf("getParameters version 1 = %s", values["data"])
	}

	values, _, err = newGenerator(t, genv1.VaultDynamicSecretSpec{Server: root.Address(), Auth: &auth, Path: "secret/metadata/dir",
		Method: "LIST"}, creds).Generate(ctx, ref, scope)
	if err != nil {
		t.Fatal(err)
	}
	if string(values["keys"]) != `["a","b"]` {
		t.Errorf("LIST keys = %q", values)
	}

	post := genv1.VaultDynamicSecretSpec{Server: root.Address(), Auth: &auth, Path: "sys/tools/random/8", Method: "POST",
		GetParameters: map[string]genv1.VaultQueryValues{"format": {"hex"}}}
	if err := newGenerator(t, post, creds).Validate(ctx, ref, scope); !errors.Is(err, plugin.ErrInvalidConfig) {
		t.Errorf("getParameters with POST: %v", err)
	}
}

// TestErrors: refusals are classified, and no message holds a credential.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	if err := root.Sys().PutPolicy("nothing", `path "secret/data/other" { capabilities = ["read"] }`); err != nil {
		t.Fatal(err)
	}
	limited, err := root.Auth().Token().Create(&vaultapi.TokenCreateRequest{Policies: []string{"nothing"}})
	if err != nil {
		t.Fatal(err)
	}
	tokenAuth := provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault-creds", Key: "token"}}
	spec := genv1.VaultDynamicSecretSpec{Server: root.Address(), Auth: &tokenAuth, Path: "sys/tools/random/8", Method: "POST"}
	cases := []struct {
		name  string
		spec  genv1.VaultDynamicSecretSpec
		token string
		want  error
		words string
	}{
		{"denied path", spec, limited.Auth.ClientToken, plugin.ErrOutOfScope, "POST sys/tools/random/8"},
		{"unknown token", spec, "hvs.not-a-token-of-this-vault", plugin.ErrAuthFailed, "Vault refused the token"},
		{"missing Secret key", func() genv1.VaultDynamicSecretSpec {
			s := spec
			s.Auth = &provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault-creds", Key: "other"}}
			return s
		}(), vaulttest.RootToken, plugin.ErrInvalidConfig, `team/vault-creds has no key "other"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newGenerator(t, tc.spec, map[string]string{"token": tc.token})
			_, _, err := g.Generate(ctx, ref, scope)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.words) {
				t.Fatalf("Generate: %v; want %v mentioning %q", err, tc.want, tc.words)
			}
			if strings.Contains(err.Error(), tc.token) {
				t.Errorf("error holds the token: %v", err)
			}
		})
	}

	g := newGenerator(t, spec, map[string]string{"token": vaulttest.RootToken})
	missing := plugin.Ref{Kind: Kind, Namespace: "team", Name: "missing"}
	if _, _, err := g.Generate(ctx, missing, scope); !errors.Is(err, plugin.ErrConfigNotFound) {
		t.Errorf("missing configuration: %v", err)
	}
	notFound := newGenerator(t, genv1.VaultDynamicSecretSpec{Server: root.Address(), Auth: &tokenAuth, Path: "database/creds/none"},
		map[string]string{"token": vaulttest.RootToken})
	if _, _, err := notFound.Generate(ctx, ref, scope); err == nil || !strings.Contains(err.Error(), "GET database/creds/none") {
		t.Errorf("path nothing answers: %v", err)
	}
	if err := g.Cleanup(ctx, ref, scope, plugin.State(`not json`)); err == nil {
		t.Error("Cleanup accepted a state it cannot read")
	}
}

// TestValidate resolves the configuration and its credentials without
// talking to Vault.
func TestValidate(t *testing.T) {
	ctx := context.Background()
	auth, creds := rootTokenAuth()
	unreachable := genv1.VaultDynamicSecretSpec{Server: "http://127.0.0.1:1", Auth: &auth, Path: "database/creds/app"}
	if err := newGenerator(t, unreachable, creds).Validate(ctx, ref, scope); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if err := newGenerator(t, unreachable, nil).Validate(ctx, ref, scope); !errors.Is(err, plugin.ErrInvalidConfig) || !strings.Contains(err.Error(), `"token"`) {
		t.Errorf("Validate without the token's key: %v", err)
	}
	bad := unreachable
	bad.Path = "v1/database/creds/app"
	if err := newGenerator(t, bad, creds).Validate(ctx, ref, scope); !errors.Is(err, plugin.ErrInvalidConfig) {
		t.Errorf("Validate with a /v1/ path: %v", err)
	}
	if err := newGenerator(t, unreachable, creds).Validate(ctx, plugin.Ref{Kind: Kind, Namespace: "team", Name: "missing"}, scope); !errors.Is(err, plugin.ErrConfigNotFound) {
		t.Errorf("Validate of a missing configuration: %v", err)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestRetrySettings: a Vault answering 503 is asked maxRetries more times,
// retryInterval apart, then the error is reported as transient.
func TestRetrySettings(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	proxy := faultproxy.Start(t, root.Address())
	proxy.Fail(vaulttest.Outage(503))
	auth, creds := rootTokenAuth()
	for _, retries := range []int32{0, 3} {
		spec := genv1.VaultDynamicSecretSpec{Server: proxy.URL, Auth: &auth, Path: "sys/tools/random/8", Method: "POST",
			RetrySettings: &genv1.VaultRetrySettings{MaxRetries: &retries, RetryInterval: &metav1.Duration{Duration: 10 * time.Millisecond}}}
		before := proxy.Requests("/v1/sys/tools/random/8")
		_, _, err := newGenerator(t, spec, creds).Generate(ctx, ref, scope)
		if err == nil || errors.Is(err, plugin.ErrAuthFailed) || errors.Is(err, plugin.ErrOutOfScope) || !strings.Contains(err.Error(), "503") {
			t.Errorf("maxRetries %d: %v, want a transient 503", retries, err)
		}
		if n := proxy.Requests("/v1/sys/tools/random/8") - before; n != int(retries)+1 {
			t.Errorf("maxRetries %d: %d requests", retries, n)
		}
	}
}
