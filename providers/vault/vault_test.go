package vault

import (
	"context"
	"errors"
	"strings"
	"testing"

	vault "github.com/hashicorp/vault/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
)

// These tests run against a real Vault dev server (make test builds it).

// newClient builds a client for spec in namespace "team", whose Secret
// vault-creds holds creds, beside the other objects given.
func newClient(t *testing.T, spec provv1.VaultSpec, creds map[string]string, objects ...client.Object) (plugin.SecretsClient, error) {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = provv1.AddToScheme(scheme)
	cfg := &provv1.Vault{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "vault"}, Spec: spec}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "vault-creds"}, Data: map[string][]byte{}}
	for k, v := range creds {
		secret.Data[k] = []byte(v)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(objects, cfg, secret)...).Build()
	p := Registration.NewProvider(plugin.Deps{Client: c, APIReader: c})
	return p.NewClient(context.Background(), plugin.Ref{Kind: Kind, Namespace: "team", Name: "vault"}, plugin.Scope{Namespace: "team"})
}

func tokenAuth() provv1.VaultAuth {
	return provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault-creds", Key: "token"}}
}

func write(t *testing.T, root *vault.Client, path string, data map[string]any) {
	t.Helper()
	if _, err := root.Logical().Write(path, data); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
}

func TestKVv2(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	write(t, root, "secret/data/app/db", map[string]any{"data": map[string]any{"user": "app", "password": "pw-1"}})
	write(t, root, "secret/data/app/db", map[string]any{"data": map[string]any{"user": "app", "password": "pw-2", "tls": map[string]any{"mode": "on"}}})
	write(t, root, "secret/metadata/app/db", map[string]any{"custom_metadata": map[string]any{"team": "payments"}})
	write(t, root, "secret/data/app/api", map[string]any{"data": map[string]any{"token": "t"}})
	write(t, root, "secret/metadata/app/api", map[string]any{"custom_metadata": map[string]any{"env": "prod"}})
	write(t, root, "secret/data/other/x", map[string]any{"data": map[string]any{"y": "z"}})

	c, err := newClient(t, provv1.VaultSpec{Server: root.Address(), Path: "secret", Version: "v2", Auth: tokenAuth()}, map[string]string{"token": vaulttest.RootToken})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ref  esv1.ExternalSecretDataRemoteRef
		want string
	}{
		{esv1.ExternalSecretDataRemoteRef{Key: "app/db", Property: "password"}, "pw-2"},
		{esv1.ExternalSecretDataRemoteRef{Key: "app/db", Property: "password", Version: "1"}, "pw-1"},
		{esv1.ExternalSecretDataRemoteRef{Key: "app/db", Property: "tls.mode"}, "on"},
		{esv1.ExternalSecretDataRemoteRef{Key: "app/db", Property: "team", MetadataPolicy: esv1.MetadataPolicyFetch}, "payments"},
	} {
		got, err := c.GetSecret(ctx, tc.ref)
		if err != nil || string(got) != tc.want {
			t.Errorf("GetSecret(%+v) = %q, %v; want %q", tc.ref, got, err, tc.want)
		}
	}
	for _, r := range []esv1.ExternalSecretDataRemoteRef{{Key: "app/nope"}, {Key: "app/db", Version: "9"}} {
		if _, err := c.GetSecret(ctx, r); !errors.Is(err, plugin.ErrSecretNotFound) {
			t.Errorf("GetSecret(%+v): %v, want ErrSecretNotFound", r, err)
		}
	}
	m, err := c.GetSecretMap(ctx, esv1.ExternalSecretDataRemoteRef{Key: "app/db"})
	if err != nil || string(m["password"]) != "pw-2" || len(m) != 3 {
		t.Errorf("GetSecretMap = %q, %v", m, err)
	}
	path := "app"
	found, err := c.GetAllSecrets(ctx, esv1.ExternalSecretFind{Path: &path})
	if err != nil || len(found) != 2 {
		t.Errorf("find under app/ = %q, %v", found, err)
	}
	found, err = c.GetAllSecrets(ctx, esv1.ExternalSecretFind{Tags: map[string]string{"env": "prod"}})
	if err != nil || len(found) != 1 || !strings.Contains(string(found["app/api"]), `"token":"t"`) {
		t.Errorf("find by custom metadata = %q, %v", found, err)
	}
	found, err = c.GetAllSecrets(ctx, esv1.ExternalSecretFind{Name: &esv1.FindName{RegExp: "^other/"}})
	if err != nil || len(found) != 1 {
		t.Errorf("find by name = %q, %v", found, err)
	}
}

func TestKVv1(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	if err := root.Sys().Mount("kv1", &vault.MountInput{Type: "kv", Options: map[string]string{"version": "1"}}); err != nil {
		t.Fatal(err)
	}
	write(t, root, "kv1/app/db", map[string]any{"password": "pw"})
	c, err := newClient(t, provv1.VaultSpec{Server: root.Address(), Path: "kv1", Version: "v1", Auth: tokenAuth()}, map[string]string{"token": vaulttest.RootToken})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "app/db", Property: "password"}); err != nil || string(got) != "pw" {
		t.Errorf("KV v1 read = %q, %v", got, err)
	}
	if found, err := c.GetAllSecrets(ctx, esv1.ExternalSecretFind{Name: &esv1.FindName{RegExp: "db"}}); err != nil || len(found) != 1 {
		t.Errorf("KV v1 find = %q, %v", found, err)
	}
}

func TestAppRoleAndDeniedReads(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	write(t, root, "secret/data/app/db", map[string]any{"data": map[string]any{"password": "pw"}})
	write(t, root, "secret/data/admin/root", map[string]any{"data": map[string]any{"password": "do-not-read"}})
	if err := root.Sys().EnableAuthWithOptions("approle", &vault.EnableAuthOptions{Type: "approle"}); err != nil {
		t.Fatal(err)
	}
	if err := root.Sys().PutPolicy("app-read", `path "secret/data/app/*" { capabilities = ["read"] }`); err != nil {
		t.Fatal(err)
	}
	write(t, root, "auth/approle/role/eso", map[string]any{"token_policies": "app-read", "token_ttl": "1h"})
	roleID, err := root.Logical().Read("auth/approle/role/eso/role-id")
	if err != nil {
		t.Fatal(err)
	}
	secretID, err := root.Logical().Write("auth/approle/role/eso/secret-id", nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := provv1.VaultSpec{Server: root.Address(), Path: "secret", Version: "v2", Auth: provv1.VaultAuth{AppRole: &provv1.VaultAppRole{
		RoleID: roleID.Data["role_id"].(string), SecretRef: provv1.SecretKeySelector{Name: "vault-creds", Key: "secret-id"}}}}
	c, err := newClient(t, spec, map[string]string{"secret-id": secretID.Data["secret_id"].(string)})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "app/db", Property: "password"}); err != nil || string(got) != "pw" {
		t.Errorf("read with AppRole = %q, %v", got, err)
	}
	_, err = c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "admin/root"})
	if !errors.Is(err, plugin.ErrOutOfScope) || strings.Contains(err.Error(), "do-not-read") {
		t.Errorf("read outside the policy: %v", err)
	}
	// Keys cannot leave the mount, e.g. to read the login token's own data.
	for _, key := range []string{"../auth/token/lookup-self", "/sys/health", "app/../../auth/token/lookup-self"} {
		if _, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: key}); !errors.Is(err, plugin.ErrOutOfScope) {
			t.Errorf("key %q: %v, want ErrOutOfScope", key, err)
		}
	}
	dotdot := "../auth"
	if _, err := c.GetAllSecrets(ctx, esv1.ExternalSecretFind{Path: &dotdot}); !errors.Is(err, plugin.ErrOutOfScope) {
		t.Errorf("find.path %q: %v", dotdot, err)
	}

	// A wrong secret ID is a readable login error, naming the mount only.
	c, err = newClient(t, spec, map[string]string{"secret-id": "wrong-secret-id"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "app/db"})
	if !errors.Is(err, plugin.ErrAuthFailed) || !strings.Contains(err.Error(), "auth/approle") || strings.Contains(err.Error(), "wrong-secret-id") {
		t.Errorf("bad login: %v", err)
	}
}

func TestWritesOnlyTouchManagedSecrets(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	write(t, root, "secret/data/theirs", map[string]any{"data": map[string]any{"v": "precious"}})
	c, err := newClient(t, provv1.VaultSpec{Server: root.Address(), Path: "secret", Version: "v2", Auth: tokenAuth()}, map[string]string{"token": vaulttest.RootToken})
	if err != nil {
		t.Fatal(err)
	}
	w := c.(plugin.Writer)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	read := func(key, property string) string {
		t.Helper()
		v, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: key, Property: property})
		if err != nil {
			t.Fatalf("reading %s: %v", key, err)
		}
		return string(v)
	}
	must(w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "mine", Value: []byte(`{"user":"app"}`)}))
	must(w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "mine", Property: "password", Value: []byte("pw")}))
	if read("mine", "user") != "app" || read("mine", "password") != "pw" {
		t.Errorf("pushed secret = %s", read("mine", ""))
	}
	must(w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "plain", Value: []byte("not json")}))
	if got := read("plain", "value"); got != "not json" {
		t.Errorf("non-JSON push = %q", got)
	}
	if err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "theirs", Value: []byte(`{"v":"x"}`)}); !errors.Is(err, plugin.ErrNotManaged) {
		t.Errorf("push over an unmanaged secret: %v", err)
	}
	if err := w.DeleteSecret(ctx, "theirs", ""); !errors.Is(err, plugin.ErrNotManaged) {
		t.Errorf("delete of an unmanaged secret: %v", err)
	}
	if got := read("theirs", "v"); got != "precious" {
		t.Errorf("unmanaged secret changed: %q", got)
	}
	must(w.DeleteSecret(ctx, "mine", "user"))
	if got := read("mine", ""); got != `{"password":"pw"}` {
		t.Errorf("after deleting a property: %s", got)
	}
	must(w.DeleteSecret(ctx, "mine", ""))
	if ok, err := w.SecretExists(ctx, "mine"); ok || err != nil {
		t.Errorf("deleted secret: exists %v, %v", ok, err)
	}
}
