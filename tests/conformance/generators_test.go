package conformance

import (
	"context"
	"encoding/base32"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/app/wiring"
	"github.com/eso-dev/eso/providers/aws/awstest"
	"github.com/eso-dev/eso/providers/gcp/gcptest"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
)

// A generator conforms when, in process and through eso's gRPC server and
// client, it validates its configuration, makes values with the keys its
// kind promises on every generation, revokes what it made (or has nothing
// to revoke), and says a missing configuration is missing.

// generatorRow is one generator kind as the suite drives it: its
// configuration, named "gen" in namespace, any credentials beside it, and
// the keys every generation must hold.
type generatorRow struct {
	config  client.Object
	objects []client.Object
	keys    []string
	// revoked, if set, says whether what a generation made is revoked:
	// checked after Cleanup, for kinds whose values can be.
	revoked func(values map[string][]byte) bool
}

// generatorRows has a row for every generator kind eso ships; a kind the
// catalog compiles in without a row fails TestEveryCompiledInGenerator.
var generatorRows = map[string]func(t testing.TB) generatorRow{
	"Password": func(testing.TB) generatorRow {
		return generatorRow{config: &genv1.Password{Spec: genv1.PasswordSpec{Length: 24}}, keys: []string{"password"}}
	},
	"UUID": func(testing.TB) generatorRow {
		return generatorRow{config: &genv1.UUID{}, keys: []string{"uuid"}}
	},
	"SSHKey": func(testing.TB) generatorRow {
		return generatorRow{config: &genv1.SSHKey{Spec: genv1.SSHKeySpec{KeyType: genv1.SSHKeyEd25519}}, keys: []string{"privateKey", "publicKey"}}
	},
	"Fake": func(testing.TB) generatorRow {
		return generatorRow{config: &genv1.Fake{Spec: genv1.FakeSpec{Data: map[string]string{"user": "app"}}}, keys: []string{"user"}}
	},
	"MFA": func(testing.TB) generatorRow {
		seed := base32.StdEncoding.EncodeToString([]byte("12345678901234567890"))
		return generatorRow{
			config:  &genv1.MFA{Spec: genv1.MFASpec{Secret: provv1.SecretKeySelector{Name: "totp", Key: "seed"}}},
			objects: []client.Object{secret("totp", map[string]string{"seed": seed})},
			keys:    []string{"token", "timeLeft"},
		}
	},
	"ECRAuthorizationToken": func(t testing.TB) generatorRow {
		return generatorRow{config: &genv1.ECRAuthorizationToken{Spec: genv1.ECRAuthorizationTokenSpec{AWSGeneratorSpec: awsGenerator(t)}},
			objects: []client.Object{awsCredentials()}, keys: []string{"username", "password", "proxy_endpoint", "expires_at"}}
	},
	"STSSessionToken": func(t testing.TB) generatorRow {
		return generatorRow{config: &genv1.STSSessionToken{Spec: genv1.STSSessionTokenSpec{AWSGeneratorSpec: awsGenerator(t)}},
			objects: []client.Object{awsCredentials()}, keys: []string{"access_key_id", "secret_access_key", "session_token"}}
	},
	"GCRAccessToken": func(t testing.TB) generatorRow {
		// A service account key whose token_uri is the in-test Google token
		// service (Google's real endpoints cannot be reached from here).
		srv, _ := gcptest.Start(t)
		key := srv.StartTokenEndpoint(t).Key(t, "puller@p.iam.gserviceaccount.com")
		return generatorRow{
			config: &genv1.GCRAccessToken{Spec: genv1.GCRAccessTokenSpec{ProjectID: "p",
				Auth: &provv1.GCPAuth{SecretRef: &provv1.GCPAuthSecretRef{SecretAccessKey: provv1.SecretKeySelector{Name: "gcp-key", Key: "key.json"}}}}},
			objects: []client.Object{secret("gcp-key", map[string]string{"key.json": string(key)})},
			keys:    []string{"username", "password", "expiry"},
		}
	},
	"VaultDynamicSecret": func(t testing.TB) generatorRow {
		root := vaulttest.Start(t)
		params := map[string]apiextensionsv1.JSON{"policies": {Raw: []byte(`["default"]`)}, "ttl": {Raw: []byte(`"1h"`)}}
		// A token it creates is leased: Cleanup revokes it.
		tokenGone := func(values map[string][]byte) bool {
			_, err := root.Auth().Token().Lookup(string(values["client_token"]))
			return err != nil
		}
		return generatorRow{
			config: &genv1.VaultDynamicSecret{Spec: genv1.VaultDynamicSecretSpec{Server: root.Address(),
				Auth: &provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault", Key: "token"}},
				Path: "auth/token/create", Method: "POST", ResultType: genv1.VaultResultAuth, Parameters: params}},
			objects: []client.Object{secret("vault", map[string]string{"token": vaulttest.RootToken})},
			keys:    []string{"client_token"},
			revoked: tokenGone,
		}
	},
}

func secret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// awsGenerator points an AWS generator at a moto_server with the keys
// awsCredentials holds.
func awsGenerator(t testing.TB) genv1.AWSGeneratorSpec {
	endpoint := awstest.StartMoto(t)
	return genv1.AWSGeneratorSpec{Region: "eu-central-1", Endpoint: endpoint, STSEndpoint: endpoint, Auth: awstest.StaticAuth()}
}

func awsCredentials() *corev1.Secret {
	return secret("aws-creds", map[string]string{"id": "conformance", "secret": "conformance"})
}

// TestEveryCompiledInGenerator runs the generator cases on every generator
// this binary compiles in, on both paths that need no outside process.
func TestEveryCompiledInGenerator(t *testing.T) {
	for _, reg := range wiring.Plugins() {
		if reg.Role() != plugin.RoleGenerator {
			continue
		}
		t.Run(reg.Kind, func(t *testing.T) {
			newRow, ok := generatorRows[reg.Kind]
			if !ok {
				t.Fatalf("generator %s has no conformance row: add one to generatorRows in generators_test.go", reg.Kind)
			}
			t.Run("in-process", func(t *testing.T) {
				row := newRow(t)
				gen, _ := generatorOf(t, reg, row)
				runGeneratorCases(t, gen, row)
			})
			t.Run("grpc", func(t *testing.T) {
				row := newRow(t)
				gen, configs := generatorOf(t, reg, row)
				served := reg
				served.NewGenerator = func(plugin.Deps) plugin.Generator { return gen }
				remote, ep := serveLoopback(t, served, configs)
				runGeneratorCases(t, remote.Generator(ep, reg.Kind), row)
			})
		})
	}
}

// generatorOf builds reg's generator over a fake API holding row's
// configuration and credentials, and returns it with that API.
func generatorOf(t *testing.T, reg plugin.Registration, row generatorRow) (plugin.Generator, client.Client) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := reg.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	row.config.SetNamespace(namespace)
	row.config.SetName("gen")
	c := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(append(row.objects, row.config)...).Build()
	return reg.NewGenerator(plugin.Deps{Client: c, APIReader: c}), c
}

// runGeneratorCases are the cases every generator passes.
func runGeneratorCases(t *testing.T, gen plugin.Generator, row generatorRow) {
	ctx := context.Background()
	ref := plugin.Ref{Kind: gen.Kind(), Namespace: namespace, Name: "gen"}
	scope := plugin.Scope{Namespace: namespace}
	t.Run("validates", func(t *testing.T) {
		if err := gen.Validate(ctx, ref, scope); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("generates and revokes", func(t *testing.T) {
		for range 2 {
			values, state, err := gen.Generate(ctx, ref, scope)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range row.keys {
				if len(values[k]) == 0 {
					t.Errorf("output lacks %q", k)
				}
			}
			if row.revoked != nil && row.revoked(values) {
				t.Error("revoked before its cleanup")
			}
			if err := gen.Cleanup(ctx, ref, scope, state); err != nil {
				t.Errorf("cleanup of state %s: %v", state, err)
			}
			if row.revoked != nil && !row.revoked(values) {
				t.Error("still valid after its cleanup")
			}
		}
	})
	t.Run("missing configuration", func(t *testing.T) {
		missing := ref
		missing.Name = "missing"
		_, _, err := gen.Generate(ctx, missing, scope)
		if !errors.Is(err, plugin.ErrConfigNotFound) && plugin.ClassOf(err) != plugin.ClassOf(plugin.ErrConfigNotFound) {
			t.Fatalf("generating with a missing configuration: %v, want it said missing", err)
		}
	})
}
