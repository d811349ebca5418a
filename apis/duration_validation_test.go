package apis_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestDurationsAreValidatedByTheAPIServer applies every duration field of
// every kind with values Go cannot decode or that would make eso spin, and
// with values it must keep accepting. A value the API server accepts but Go
// cannot decode would stop eso's informer for the whole kind.
func TestDurationsAreValidatedByTheAPIServer(t *testing.T) {
	ns := env.Namespace(t, "durations", nil)
	type field struct {
		name     string
		manifest string // %s is the value, already quoted
		rule     string // what the refusal of a too-short value says
		zeroOK   bool
	}
	es := func(spec string) string {
		return `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {generateName: d-}
spec:
  secretStoreRef: {name: s}
  data: [{secretKey: a, remoteRef: {key: k}}]
` + spec
	}
	store := func(kind, spec string) string {
		return `
apiVersion: secretstore.external-secrets.io/v2alpha1
kind: ` + kind + `
metadata: {generateName: d-}
spec:
  providerConfig: {providerRef: {kind: Fake, name: f, namespace: ` + ns + `}}
` + spec
	}
	gen := func(kind, spec string) string {
		return `
apiVersion: generator.external-secrets.io/v2alpha1
kind: ` + kind + `
metadata: {generateName: d-}
spec:
  providerConfig: {providerRef: {kind: Password, name: p, namespace: ` + ns + `}}
` + spec
	}
	fields := []field{
		{"ExternalSecret refreshInterval", es("  refreshInterval: %s"), "refreshInterval must be 0s or at least 1s", true},
		{"ExternalSecret syncWindows duration", es(`  syncWindows: {kind: deny, windows: [{schedule: "0 22 * * *", duration: %s}]}`), "duration must be at least 1s", false},
		{"ClusterExternalSecret refreshTime", `
apiVersion: external-secrets.io/v1
kind: ClusterExternalSecret
metadata: {generateName: d-}
spec:
  refreshTime: %s
  namespaces: [a]
  externalSecretSpec:
    secretStoreRef: {name: s}
    data: [{secretKey: a, remoteRef: {key: k}}]`, "refreshTime must be at least 1s", false},
		{"ClusterExternalSecret's ExternalSecret refreshInterval", `
apiVersion: external-secrets.io/v1
kind: ClusterExternalSecret
metadata: {generateName: d-}
spec:
  namespaces: [a]
  externalSecretSpec:
    refreshInterval: %s
    secretStoreRef: {name: s}
    data: [{secretKey: a, remoteRef: {key: k}}]`, "refreshInterval must be 0s or at least 1s", true},
		{"SecretStore refreshInterval", store("SecretStore", "  refreshInterval: %s"), "refreshInterval must be 0s or at least 1s", true},
		{"SecretStore retryInterval", store("SecretStore", "  retrySettings: {retryInterval: %s}"), "retryInterval must be at least 1s", false},
		{"SecretStore cacheConfig ttl", store("SecretStore", "  cachingPolicy: Secrets\n  cacheConfig: {ttl: %s}"), "ttl must be at least 1s", false},
		{"ClusterSecretStore refreshInterval", store("ClusterSecretStore", "  refreshInterval: %s"), "refreshInterval must be 0s or at least 1s", true},
		{"Generator refreshInterval", gen("Generator", "  refreshInterval: %s"), "refreshInterval must be 0s or at least 1s", true},
		{"ClusterGenerator garbageCollectionDeadline", gen("ClusterGenerator", "  stateSpec: {garbageCollectionDeadline: %s}"), "", true},
		{"VaultDynamicSecret retryInterval", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: VaultDynamicSecret
metadata: {generateName: d-}
spec:
  server: https://vault.example
  path: database/creds/app
  auth: {tokenSecretRef: {name: t, key: token}}
  retrySettings: {retryInterval: %s}`, "", true},
	}
	undecodable := []string{`banana`, `"1d"`, `"-1s"`, `"1h-"`, `"9999999999999999h"`, `"1 s"`, `""`}
	decodable := []string{`"1s"`, `"1h30m"`, `"1.5h"`, `"90m"`, `"2562047h"`}
	for _, f := range fields {
		t.Run(f.name, func(t *testing.T) {
			for _, v := range undecodable {
				if _, err := apply(t, ns, fmt.Sprintf(f.manifest, v)); err == nil {
					t.Errorf("%s accepted; Go cannot decode it", v)
				}
			}
			for _, v := range decodable {
				if _, err := apply(t, ns, fmt.Sprintf(f.manifest, v)); err != nil {
					t.Errorf("%s rejected: %v", v, err)
				}
			}
			if f.rule != "" {
				_, err := apply(t, ns, fmt.Sprintf(f.manifest, `"500ms"`))
				if err == nil || !strings.Contains(err.Error(), f.rule) {
					t.Errorf("500ms: got %v, want a refusal saying %q", err, f.rule)
				}
			}
			_, err := apply(t, ns, fmt.Sprintf(f.manifest, `"0s"`))
			if f.zeroOK && err != nil {
				t.Errorf("0s rejected: %v", err)
			}
			if !f.zeroOK && err == nil {
				t.Errorf("0s accepted")
			}
		})
	}

	// GeneratorStates carry a time, not a duration: a tenant can write one.
	if _, err := apply(t, ns, `
apiVersion: generator.external-secrets.io/v2alpha1
kind: GeneratorState
metadata: {name: bad-deadline}
spec:
  generator: {kind: Password, name: p}
  providerRef: {kind: Password, name: p}
  garbageCollectionDeadline: banana`); err == nil {
		t.Error("a GeneratorState with garbageCollectionDeadline: banana was accepted")
	}
}

// TestCredentialSecretTypesRefusedOnUpdate: the rule against templates of
// Secret types Kubernetes fills with credentials holds when an existing
// ExternalSecret is changed, not only when one is created.
func TestCredentialSecretTypesRefusedOnUpdate(t *testing.T) {
	ns := env.Namespace(t, "credential-types", nil)
	obj, err := apply(t, ns, `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: app}
spec:
  secretStoreRef: {name: s}
  target: {template: {type: Opaque}}
  data: [{secretKey: a, remoteRef: {key: k}}]`)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"kubernetes.io/service-account-token", "bootstrap.kubernetes.io/token"} {
		changed := obj.DeepCopy()
		if err := unstructured.SetNestedField(changed.Object, typ, "spec", "target", "template", "type"); err != nil {
			t.Fatal(err)
		}
		err := env.Client.Update(context.Background(), changed)
		if err == nil || !strings.Contains(err.Error(), "fills with credentials") {
			t.Errorf("changing the template type to %s: %v, want a refusal", typ, err)
		}
	}
}
