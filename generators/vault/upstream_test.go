package vault

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
)

// upstreamConfig is a VaultDynamicSecret of namespace team whose
// connection is upstream's provider block, written as YAML.
func upstreamConfig(t *testing.T, block string) *genv1.VaultDynamicSecret {
	t.Helper()
	var p upstreamv1.VaultProvider
	if err := yaml.UnmarshalStrict([]byte(block), &p); err != nil {
		t.Fatal(err)
	}
	return &genv1.VaultDynamicSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "gen"},
		Spec: genv1.VaultDynamicSecretSpec{Provider: &p, Path: "sys/tools/random/8", Method: "POST"}}
}

// TestUpstreamShapeIsTheSameConnection: each login method eso serves,
// written in upstream's provider block, is the connection the spec-level
// fields give; path and version, which mean a KV mount to a store, change
// nothing for a generator.
func TestUpstreamShapeIsTheSameConnection(t *testing.T) {
	for _, tc := range []struct {
		name, block string
		want        provv1.VaultAuth
	}{
		{"token", `{server: "https://vault:8200", auth: {tokenSecretRef: {name: t, key: token}}}`,
			provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "t", Key: "token"}}},
		{"appRole", `{server: "https://vault:8200", auth: {appRole: {path: approle, roleId: r, secretRef: {name: s, key: id}}}}`,
			provv1.VaultAuth{AppRole: &provv1.VaultAppRole{Path: "approle", RoleID: "r", SecretRef: provv1.SecretKeySelector{Name: "s", Key: "id"}}}},
		{"kubernetes", `{server: "https://vault:8200", auth: {kubernetes: {mountPath: k8s, role: eso, serviceAccountRef: {name: sa, namespace: team, audiences: [vault]}}}}`,
			provv1.VaultAuth{Kubernetes: &provv1.VaultKubernetesAuth{MountPath: "k8s", Role: "eso",
				ServiceAccountRef: provv1.KubernetesServiceAccount{Name: "sa", Audiences: []string{"vault"}}}}},
		{"jwt", `{server: "https://vault:8200", auth: {jwt: {path: jwt, role: eso, kubernetesServiceAccountToken: {serviceAccountRef: {name: sa}, audiences: [a]}}}}`,
			provv1.VaultAuth{JWT: &provv1.VaultKubernetesAuth{MountPath: "jwt", Role: "eso",
				ServiceAccountRef: provv1.KubernetesServiceAccount{Name: "sa", Audiences: []string{"a"}}}}},
		{"cert", `{server: "https://vault:8200", auth: {cert: {path: cert, vaultRole: web, clientCert: {name: c, key: tls.crt}, secretRef: {name: c, key: tls.key}}}}`,
			provv1.VaultAuth{Cert: &provv1.VaultCertAuth{Path: "cert", Name: "web",
				ClientCert: provv1.SecretKeySelector{Name: "c", Key: "tls.crt"}, SecretRef: provv1.SecretKeySelector{Name: "c", Key: "tls.key"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := upstreamConfig(t, tc.block)
			cfg.Spec.Provider.Path, cfg.Spec.Provider.Version = ptr.To("secret"), upstreamv1.VaultKVStoreV1
			cfg.Spec.Provider.Namespace = ptr.To("ns1")
			got, err := vaultSpec(cfg, "team")
			if err != nil {
				t.Fatal(err)
			}
			want := &provv1.VaultSpec{Server: "https://vault:8200", Namespace: "ns1", Auth: tc.want}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("connection\n got %+v\nwant %+v", got, want)
			}
			if err := check(cfg); err != nil {
				t.Errorf("check: %v", err)
			}
		})
	}
}

// TestUpstreamShapeRefusals: what eso cannot serve in upstream's block,
// and what would have no effect on a generator, is refused by path with
// what to write instead, never ignored; a reference to another namespace
// is refused as out of scope; so is a configuration in both shapes or
// neither (objects that got past the schema).
func TestUpstreamShapeRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, block string
		is          error
		want        string
	}{
		{"ldap", `{server: "https://vault:8200", auth: {ldap: {path: ldap, username: u, secretRef: {name: p, key: pw}}}}`,
			plugin.ErrInvalidConfig, "spec.provider.auth.ldap: not supported"},
		{"no auth", `{server: "https://vault:8200"}`, plugin.ErrInvalidConfig, "spec.provider.auth: eso needs an authentication method"},
		{"client TLS", `{server: "https://vault:8200", tls: {certSecretRef: {name: c}}, auth: {tokenSecretRef: {name: t, key: token}}}`,
			plugin.ErrInvalidConfig, "spec.provider.tls: client certificates"},
		{"another scheme", `{server: "unix:///var/run/vault.sock", auth: {tokenSecretRef: {name: t, key: token}}}`,
			plugin.ErrInvalidConfig, "spec.provider.server: must be an http:// or https:// address"},
		{"two login methods", `{server: "https://vault:8200", auth: {tokenSecretRef: {name: t, key: token}, kubernetes: {mountPath: k, role: r, serviceAccountRef: {name: sa}}}}`,
			plugin.ErrInvalidConfig, "spec.provider.auth.kubernetes: not used: tokenSecretRef takes precedence, as upstream (without effect: leave it out)"},
		{"a token lifetime eso does not ask for", `{server: "https://vault:8200", auth: {jwt: {path: jwt, role: r, kubernetesServiceAccountToken: {serviceAccountRef: {name: sa}, expirationSeconds: 600}}}}`,
			plugin.ErrInvalidConfig, "expirationSeconds"},
		{"KV settings", `{server: "https://vault:8200", readYourWrites: true, auth: {tokenSecretRef: {name: t, key: token}}}`,
			plugin.ErrInvalidConfig, "without effect on a generator's request"},
		{"another namespace", `{server: "https://vault:8200", auth: {tokenSecretRef: {name: t, key: token, namespace: kube-system}}}`,
			plugin.ErrOutOfScope, "spec.provider.auth.tokenSecretRef.namespace: a generator reads credentials from team only"},
		{"a CA of another namespace", `{server: "https://vault:8200", caProvider: {type: Secret, name: ca, key: ca.crt, namespace: other}, auth: {tokenSecretRef: {name: t, key: token}}}`,
			plugin.ErrOutOfScope, "spec.provider.caProvider.namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := check(upstreamConfig(t, tc.block))
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("check = %v, want %v saying %q", err, tc.is, tc.want)
			}
		})
	}
	both := upstreamConfig(t, `{server: "https://vault:8200", auth: {tokenSecretRef: {name: t, key: token}}}`)
	both.Spec.CAProvider = &provv1.CAProvider{Type: "Secret", Name: "ca", Key: "ca.crt"}
	if err := check(both); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("both shapes: %v", err)
	}
	neither := &genv1.VaultDynamicSecret{Spec: genv1.VaultDynamicSecretSpec{Path: "x"}}
	if err := check(neither); err == nil || !strings.Contains(err.Error(), "server and auth are required") {
		t.Errorf("neither shape: %v", err)
	}
}

// TestUpstreamShapeStaysInTheCredentialsNamespace: credentials resolve in
// the scope eso gives the generator (a ClusterGenerator with
// ManifestNamespace gives each ExternalSecret's); a reference naming the
// configuration's own namespace is then refused, not ignored.
func TestUpstreamShapeStaysInTheCredentialsNamespace(t *testing.T) {
	cfg := upstreamConfig(t, `{server: "https://vault:8200", auth: {tokenSecretRef: {name: t, key: token, namespace: team}}}`)
	if err := check(cfg); err != nil {
		t.Fatalf("the configuration's own namespace: %v", err)
	}
	_, _, err := newGenerator(t, cfg.Spec, nil).Generate(context.Background(), ref, plugin.Scope{Namespace: "tenant"})
	if !errors.Is(err, plugin.ErrOutOfScope) || !strings.Contains(err.Error(), "reads credentials from tenant only") {
		t.Errorf("generate in another credentials namespace: %v", err)
	}
}

// TestUpstreamShapeGenerates: a configuration in upstream's shape logs in
// and sends its request to a real Vault dev server.
func TestUpstreamShapeGenerates(t *testing.T) {
	root := vaulttest.Start(t)
	cfg := upstreamConfig(t, `{server: "`+root.Address()+`", path: secret, auth: {tokenSecretRef: {name: vault-creds, key: token, namespace: team}}}`)
	g := newGenerator(t, cfg.Spec, map[string]string{"token": vaulttest.RootToken})
	values, state, err := g.Generate(context.Background(), ref, scope)
	if err != nil {
		t.Fatal(err)
	}
	if len(values["random_bytes"]) == 0 || state != nil {
		t.Errorf("values %v, state %s: want random_bytes and no state", keysOf(values), state)
	}
}

func keysOf(m map[string][]byte) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
