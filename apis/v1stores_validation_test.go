package apis_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/eso-dev/eso/tests/testenv"
)

// servedV1Providers is the part of the refusal message that names what eso serves.
const servedV1Providers = "eso serves the aws, gcpsm, vault, kubernetes, fake and plugin providers of external-secrets.io/v1 stores"

// applyV1Store creates manifest, in namespace when it is a SecretStore, and
// deletes a ClusterSecretStore again when the test ends.
func applyV1Store(t *testing.T, namespace, manifest string) (*unstructured.Unstructured, error) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatalf("bad test manifest: %v", err)
	}
	if obj.GetKind() == "SecretStore" {
		obj.SetNamespace(namespace)
	}
	err := env.Client.Create(context.Background(), obj)
	if err == nil && obj.GetKind() == "ClusterSecretStore" {
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
	}
	return obj, err
}

// TestV1StoresFromUpstreamDocsApply: SecretStores and ClusterSecretStores
// written as upstream documents them for the providers eso serves (and a
// store of eso's plugin provider) apply unchanged and get upstream's defaults.
func TestV1StoresFromUpstreamDocsApply(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "apis", "testdata", "upstream-v1-stores.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t, "v1stores", nil)
	applied := map[string]int{}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		obj, err := applyV1Store(t, ns, doc)
		if err != nil {
			t.Errorf("%s %s rejected: %v", obj.GetKind(), obj.GetName(), err)
			continue
		}
		provider, _, _ := unstructured.NestedMap(obj.Object, "spec", "provider")
		for name := range provider {
			applied[name]++
		}
		// Fields upstream's schema defaults, read back from the API server:
		// the default where the manifest leaves the field out.
		for path, def := range map[string]string{
			"aws.sessionTagsPolicy":              "None",
			"gcpsm.secretVersionSelectionPolicy": "LatestOrFail",
			"vault.version":                      "v2",
			"kubernetes.remoteNamespace":         "default",
			"kubernetes.server.url":              "kubernetes.default",
		} {
			fields := append([]string{"spec", "provider"}, strings.Split(path, ".")...)
			if _, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, fields[:len(fields)-1]...); !ok {
				continue // defaults apply inside objects the manifest has
			}
			got, _, _ := unstructured.NestedString(obj.Object, fields...)
			written := strings.Contains(doc, " "+fields[len(fields)-1]+":")
			if got == "" || (!written && got != def) {
				t.Errorf("%s %s: %s = %q, want %q", obj.GetKind(), obj.GetName(), path, got, def)
			}
		}
	}
	for _, p := range []string{"aws", "gcpsm", "vault", "kubernetes", "fake", "plugin"} {
		if applied[p] < 2 {
			t.Errorf("applied %d stores of provider %s, want at least 2 (a SecretStore and a ClusterSecretStore)", applied[p], p)
		}
	}
}

// TestV1StoreOfAnUnsupportedProviderIsRejected: a store naming an upstream
// provider eso does not serve is refused with a message naming the
// providers eso serves and the one it named, never accepted with the
// provider pruned away.
func TestV1StoreOfAnUnsupportedProviderIsRejected(t *testing.T) {
	ns := env.Namespace(t, "v1stores-unsupported", nil)
	cases := []struct {
		name, manifest, want string
	}{
		{"azurekv SecretStore", `
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: azure}
spec:
  provider:
    azurekv:
      tenantId: 5f2b9c1e-0000-4000-8000-000000000001
      vaultUrl: https://orders.vault.azure.net
      authSecretRef:
        clientId: {name: azure-sp, key: client-id}
        clientSecret: {name: azure-sp, key: client-secret}`,
			servedV1Providers + "; azurekv is not one of them"},
		{"onepasswordSDK ClusterSecretStore", `
apiVersion: external-secrets.io/v1
kind: ClusterSecretStore
metadata: {name: v1stores-onepassword}
spec:
  provider:
    onepasswordSDK:
      vault: staging
      auth:
        serviceAccountSecretRef: {name: op-token, key: token, namespace: platform}`,
			servedV1Providers + "; onepasswordSDK is not one of them"},
		{"webhook SecretStore with an empty configuration", `
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: webhook}
spec:
  provider:
    webhook: {}`,
			servedV1Providers + "; webhook is not one of them"},
		{"aws beside akeyless", `
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: aws-and-akeyless}
spec:
  provider:
    aws: {service: SecretsManager, region: eu-central-1}
    akeyless: {akeylessGWApiURL: "https://api.akeyless.io"}`,
			servedV1Providers + "; akeyless is not one of them"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := applyV1Store(t, ns, tc.manifest)
			if err == nil {
				t.Fatalf("accepted, want rejection with %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("rejected with %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestV1StoreNeedsExactlyOneProvider: a store with two providers, with an
// empty provider, with only a provider name nobody knows (pruned to an
// empty provider) or with no provider at all is refused.
func TestV1StoreNeedsExactlyOneProvider(t *testing.T) {
	ns := env.Namespace(t, "v1stores-one", nil)
	const exactlyOne = "provider needs exactly one provider; " + servedV1Providers
	cases := []struct {
		name, manifest, want string
	}{
		{"two providers", `
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: two}
spec:
  provider:
    fake: {data: [{key: k, value: v}]}
    vault:
      server: https://vault.internal.example:8200
      auth: {tokenSecretRef: {name: vault-token, key: token}}`,
			exactlyOne},
		{"two providers in a ClusterSecretStore", `
apiVersion: external-secrets.io/v1
kind: ClusterSecretStore
metadata: {name: v1stores-two}
spec:
  provider:
    gcpsm: {projectID: p-1}
    plugin: {address: "eso-provider:8443", providerRef: {kind: Fake, name: f, namespace: platform}}`,
			exactlyOne},
		{"an empty provider", `
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: empty}
spec:
  provider: {}`,
			exactlyOne},
		{"only a provider nobody knows", `
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: unknown}
spec:
  provider:
    nosuchprovider: {server: x}`,
			exactlyOne},
		{"no provider", `
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: none}
spec:
  controller: dev`,
			"spec.provider: Required value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := applyV1Store(t, ns, tc.manifest)
			if err == nil {
				t.Fatalf("accepted, want rejection with %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("rejected with %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestV1StoreRefreshIntervalIsSecondsOrADuration: refreshInterval takes a
// number of seconds or a Go duration (as upstream reads it), and
// retryInterval a Go duration; anything else is refused at admission rather
// than failing later in the controller.
func TestV1StoreRefreshIntervalIsSecondsOrADuration(t *testing.T) {
	ns := env.Namespace(t, "v1stores-interval", nil)
	store := func(name, fields string) string {
		return `
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: ` + name + `}
spec:
` + fields + `
  provider:
    fake: {data: [{key: k, value: v}]}`
	}
	for name, fields := range map[string]string{
		"seconds":     "  refreshInterval: 90",
		"zero":        "  refreshInterval: 0",
		"duration":    "  refreshInterval: 1h30m",
		"zero-string": `  refreshInterval: "0"`,
		"retry":       "  retrySettings: {maxRetries: 4, retryInterval: 2.5s}",
	} {
		if _, err := applyV1Store(t, ns, store(name, fields)); err != nil {
			t.Errorf("%s (%s) rejected: %v", name, strings.TrimSpace(fields), err)
		}
	}
	for name, fields := range map[string]string{
		"negative":        "  refreshInterval: -5",
		"no-unit":         `  refreshInterval: "90"`,
		"words":           "  refreshInterval: hourly",
		"retry-words":     "  retrySettings: {retryInterval: soon}",
		"negative-string": `  refreshInterval: "-1h"`,
	} {
		if _, err := applyV1Store(t, ns, store(name, fields)); err == nil {
			t.Errorf("%s (%s) accepted, want it refused", name, strings.TrimSpace(fields))
		} else if !strings.Contains(err.Error(), "Interval") {
			t.Errorf("%s refused with %q, want the message to name the field", name, err)
		}
	}
}
