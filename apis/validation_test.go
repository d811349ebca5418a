package apis_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/eso-dev/eso/tests/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func apply(t *testing.T, namespace, manifest string) (*unstructured.Unstructured, error) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatalf("bad test manifest: %v", err)
	}
	if namespace != "" {
		obj.SetNamespace(namespace)
	}
	return obj, env.Client.Create(context.Background(), obj)
}

// TestInvalidManifestsAreRejectedWithAReadableMessage applies manifests a user
// could write by mistake and checks the API server refuses each with a message
// that says what to fix.
func TestInvalidManifestsAreRejectedWithAReadableMessage(t *testing.T) {
	ns := env.Namespace(t, "validation", nil)
	cases := []struct {
		name     string
		manifest string
		want     string
	}{
		{"AWS configuration naming no AWS region", `
apiVersion: provider.secretstore.external-secrets.io/v2alpha1
kind: AWSSecretManager
metadata: {name: bad-region}
spec:
  region: Frankfurt`,
			"region must be an AWS region name, such as eu-central-1"},
		{"ExternalSecret deleting a Secret it does not own", `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: delete-orphan}
spec:
  secretStoreRef: {name: s}
  target: {creationPolicy: Merge, deletionPolicy: Delete}
  data: [{secretKey: a, remoteRef: {key: k}}]`,
			"deletionPolicy Delete needs creationPolicy Owner or Orphan"},
		{"ExternalSecret removing keys from a Secret it never writes", `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: merge-none}
spec:
  secretStoreRef: {name: s}
  target: {creationPolicy: None, deletionPolicy: Merge}
  data: [{secretKey: a, remoteRef: {key: k}}]`,
			"deletionPolicy Merge needs a creationPolicy that writes a Secret"},
		{"ExternalSecret merge rewrite into JSON without a key", `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: merge-no-into}
spec:
  secretStoreRef: {name: s}
  dataFrom: [{find: {name: {regexp: "."}}, rewrite: [{merge: {strategy: JSON}}]}]`,
			"merge strategy JSON needs into"},
		{"ExternalSecret sync window that is neither allow nor deny", `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: bad-window}
spec:
  secretStoreRef: {name: s}
  syncWindows: {kind: maybe, windows: [{schedule: "0 22 * * *", duration: 1h}]}
  data: [{secretKey: a, remoteRef: {key: k}}]`,
			`spec.syncWindows.kind: Unsupported value: "maybe"`},
		{"ClusterExternalSecret without target namespaces", `
apiVersion: external-secrets.io/v1
kind: ClusterExternalSecret
metadata: {name: validation-no-namespaces}
spec:
  externalSecretSpec:
    secretStoreRef: {name: s}
    data: [{secretKey: a, remoteRef: {key: k}}]`,
			"name the target namespaces with namespaceSelectors or namespaces"},
		{"PushSecret selecting a Secret and a generator at once", `
apiVersion: external-secrets.io/v1alpha1
kind: PushSecret
metadata: {name: two-sources}
spec:
  secretStoreRefs: [{name: s}]
  selector:
    secret: {name: src}
    generatorRef: {kind: Password, name: pw}
  data: [{match: {secretKey: a, remoteRef: {remoteKey: k}}}]`,
			"selector needs exactly one of secret or generatorRef"},
		{"PushSecret with a store reference naming no store", `
apiVersion: external-secrets.io/v1alpha1
kind: PushSecret
metadata: {name: store-none}
spec:
  secretStoreRefs: [{kind: SecretStore}]
  selector: {secret: {name: src}}`,
			"a store reference needs a name or a labelSelector"},
		{"PushSecret bundling into one remote key and renaming keys", `
apiVersion: external-secrets.io/v1alpha1
kind: PushSecret
metadata: {name: bundle-rewrite}
spec:
  secretStoreRefs: [{name: s}]
  selector: {secret: {name: src}}
  dataTo: [{storeRef: {name: s}, remoteKey: all, rewrite: [{regexp: {source: a, target: b}}]}]`,
			"remoteKey and rewrite are mutually exclusive"},
		{"PushSecret adopting remote secrets it would never write", `
apiVersion: external-secrets.io/v1alpha1
kind: PushSecret
metadata: {name: adopt-ifnotexists}
spec:
  secretStoreRefs: [{name: s}]
  updatePolicy: IfNotExists
  adoptionPolicy: Adopt
  selector: {secret: {name: src}}
  data: [{match: {secretKey: a, remoteRef: {remoteKey: k}}}]`,
			"adoptionPolicy Adopt needs updatePolicy Replace"},
		{"PushSecret refreshing every few milliseconds", `
apiVersion: external-secrets.io/v1alpha1
kind: PushSecret
metadata: {name: too-often}
spec:
  refreshInterval: 10ms
  secretStoreRefs: [{name: s}]
  selector: {secret: {name: src}}
  data: [{match: {secretKey: a, remoteRef: {remoteKey: k}}}]`,
			"refreshInterval must be 0s or at least 1s"},
		{"ExternalSecret with nothing to sync", `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: empty}
spec:
  secretStoreRef: {name: s}`,
			"list at least one secret to sync in data or dataFrom"},
		{"ExternalSecret with a key Secrets cannot hold", `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: bad-key}
spec:
  secretStoreRef: {name: s}
  data: [{secretKey: "a/b", remoteRef: {key: k}}]`,
			"spec.data[0].secretKey"},
		{"ExternalSecret dataFrom entry with no source", `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: bad-datafrom}
spec:
  secretStoreRef: {name: s}
  dataFrom: [{}]`,
			"each dataFrom entry needs exactly one of extract, find or sourceRef.generatorRef"},
		{"ExternalSecret dataFrom entry with two sources", `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: two-sources}
spec:
  secretStoreRef: {name: s}
  dataFrom: [{extract: {key: k}, find: {name: {regexp: ".*"}}}]`,
			"each dataFrom entry needs exactly one of extract, find or sourceRef.generatorRef"},
		{"ExternalSecret find selecting everything", `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: find-all}
spec:
  secretStoreRef: {name: s}
  dataFrom: [{find: {}}]`,
			"find needs name, path or tags"},
		{"ExternalSecret rewrite with two rules in one", `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: bad-rewrite}
spec:
  secretStoreRef: {name: s}
  dataFrom:
  - find: {name: {regexp: "^db-"}}
    rewrite: [{regexp: {source: "^db-", target: ""}, transform: {template: "x"}}]`,
			"each rewrite needs exactly one of regexp, transform or merge"},
		{"ExternalSecret without any store", `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: no-store}
spec:
  data:
  - {secretKey: a, remoteRef: {key: k}, sourceRef: {storeRef: {name: s}}}
  - {secretKey: b, remoteRef: {key: k}}`,
			"secretStoreRef is required unless every data and dataFrom entry names its own sourceRef"},
		{"ExternalSecret naming an unknown store kind", `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: bad-kind}
spec:
  secretStoreRef: {name: s, kind: VaultStore}
  data: [{secretKey: a, remoteRef: {key: k}}]`,
			`spec.secretStoreRef.kind: Unsupported value: "VaultStore"`},
		{"ExternalSecret naming a store API eso does not serve", `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: bad-version}
spec:
  secretStoreRef: {name: s, apiVersion: external-secrets.io/v1beta1}
  data: [{secretKey: a, remoteRef: {key: k}}]`,
			"spec.secretStoreRef.apiVersion: Unsupported value"},
		{"ExternalSecret templating a service-account token Secret", `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: sa-token}
spec:
  secretStoreRef: {name: s}
  target: {template: {type: kubernetes.io/service-account-token}}
  data: [{secretKey: a, remoteRef: {key: k}}]`,
			"template.type may not be a type Kubernetes fills with credentials"},
		{"ExternalSecret templateFrom with two sources", `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: two-template-sources}
spec:
  secretStoreRef: {name: s}
  target: {template: {templateFrom: [{literal: "a: b", configMap: {name: c, items: [{key: k}]}}]}}
  data: [{secretKey: a, remoteRef: {key: k}}]`,
			"each templateFrom entry needs exactly one of configMap, secret or literal"},
		{"SecretStore without a provider", `
apiVersion: secretstore.external-secrets.io/v2alpha1
kind: SecretStore
metadata: {name: no-provider}
spec: {}`,
			"spec.providerConfig: Required value"},
		{"SecretStore with an unknown gating policy", `
apiVersion: secretstore.external-secrets.io/v2alpha1
kind: SecretStore
metadata: {name: bad-gating}
spec:
  gatingPolicy: Sometimes
  providerConfig: {providerRef: {kind: Fake, name: f}}`,
			`spec.gatingPolicy: Unsupported value: "Sometimes"`},
		{"SecretStore with a cache it does not use", `
apiVersion: secretstore.external-secrets.io/v2alpha1
kind: SecretStore
metadata: {name: bad-cache}
spec:
  cachingPolicy: None
  cacheConfig: {ttl: 1m}
  providerConfig: {providerRef: {kind: Fake, name: f}}`,
			"cacheConfig is only used with cachingPolicy Secrets, Auth or All"},
		{"ClusterSecretStore without the provider's namespace", `
apiVersion: secretstore.external-secrets.io/v2alpha1
kind: ClusterSecretStore
metadata: {name: validation-no-namespace}
spec:
  providerConfig: {providerRef: {kind: Fake, name: f}}`,
			"providerConfig.providerRef.namespace is required"},
		{"ClusterSecretStore with an empty condition", `
apiVersion: secretstore.external-secrets.io/v2alpha1
kind: ClusterSecretStore
metadata: {name: validation-empty-condition}
spec:
  providerConfig: {providerRef: {kind: Fake, name: f, namespace: default}}
  conditions: [{}]`,
			"a condition needs namespaceSelector, namespaces or namespaceRegexes"},
		{"ClusterSecretStore with an unknown authentication scope", `
apiVersion: secretstore.external-secrets.io/v2alpha1
kind: ClusterSecretStore
metadata: {name: validation-bad-scope}
spec:
  authenticationScope: Everywhere
  providerConfig: {providerRef: {kind: Fake, name: f, namespace: default}}`,
			`spec.authenticationScope: Unsupported value: "Everywhere"`},
		{"Vault with two login methods", `
apiVersion: provider.secretstore.external-secrets.io/v2alpha1
kind: Vault
metadata: {name: two-logins}
spec:
  server: https://vault:8200
  auth:
    tokenSecretRef: {name: t, key: token}
    cert: {clientCert: {name: c, key: tls.crt}, secretRef: {name: c, key: tls.key}}`,
			"auth needs exactly one of tokenSecretRef, appRole, kubernetes, jwt or cert"},
		{"Vault cert login over plain HTTP", `
apiVersion: provider.secretstore.external-secrets.io/v2alpha1
kind: Vault
metadata: {name: cert-http}
spec:
  server: http://vault:8200
  auth:
    cert: {clientCert: {name: c, key: tls.crt}, secretRef: {name: c, key: tls.key}}`,
			"cert auth needs an https:// server"},
		{"Vault with two CA sources", `
apiVersion: provider.secretstore.external-secrets.io/v2alpha1
kind: Vault
metadata: {name: two-cas}
spec:
  server: https://vault:8200
  caBundle: Zm9v
  caProvider: {type: ConfigMap, name: ca, key: ca.crt}
  auth: {tokenSecretRef: {name: t, key: token}}`,
			"set caBundle or caProvider, not both"},
		{"Kubernetes with two identities", `
apiVersion: provider.secretstore.external-secrets.io/v2alpha1
kind: Kubernetes
metadata: {name: two-identities}
spec:
  server: {url: "https://hub:6443"}
  auth:
    token: {bearerToken: {name: t, key: token}}
    serviceAccount: {name: sa}`,
			"auth needs exactly one of token, cert or serviceAccount"},
		{"Kubernetes of another cluster as eso itself", `
apiVersion: provider.secretstore.external-secrets.io/v2alpha1
kind: Kubernetes
metadata: {name: remote-as-eso}
spec:
  server: {url: "https://hub:6443"}`,
			"a remote server.url needs auth"},
		{"Kubernetes of another cluster over plain HTTP", `
apiVersion: provider.secretstore.external-secrets.io/v2alpha1
kind: Kubernetes
metadata: {name: remote-http}
spec:
  server: {url: "http://hub:8080"}
  auth: {token: {bearerToken: {name: t, key: token}}}`,
			`spec.server.url in body should match '^https://'`},
		{"Kubernetes with two CA sources", `
apiVersion: provider.secretstore.external-secrets.io/v2alpha1
kind: Kubernetes
metadata: {name: two-cas}
spec:
  server: {url: "https://hub:6443", caBundle: Zm9v, caProvider: {type: Secret, name: ca, key: ca.crt}}
  auth: {token: {bearerToken: {name: t, key: token}}}`,
			"set caBundle or caProvider, not both"},
		{"Kubernetes CA for this cluster", `
apiVersion: provider.secretstore.external-secrets.io/v2alpha1
kind: Kubernetes
metadata: {name: local-ca}
spec:
  server: {caProvider: {type: ConfigMap, name: ca, key: ca.crt}}
  auth: {serviceAccount: {name: sa}}`,
			"server.caBundle and server.caProvider need server.url"},
		{"GCP with two auth methods", `
apiVersion: provider.secretstore.external-secrets.io/v2alpha1
kind: GCPSecretManager
metadata: {name: two-auths}
spec:
  projectID: p
  auth:
    secretRef: {secretAccessKeySecretRef: {name: k, key: key.json}}
    workloadIdentity: {clusterLocation: l, clusterName: c, serviceAccountRef: {name: sa}}`,
			"auth needs exactly one of secretRef or workloadIdentity"},
		{"Password with more digits and symbols than characters", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: Password
metadata: {name: too-many}
spec: {length: 8, digits: 5, symbols: 5, allowRepeat: true}`,
			"digits + symbols may not exceed length"},
		{"Password with more distinct digits than exist", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: Password
metadata: {name: distinct-digits}
spec: {length: 32, digits: 12, symbols: 0}`,
			"without allowRepeat there are only 10 distinct digits"},
		{"Password longer than its distinct letters allow", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: Password
metadata: {name: long}
spec: {length: 200, digits: 0, symbols: 0}`,
			"not enough distinct letters"},
		{"Password with fewer symbol characters than symbols", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: Password
metadata: {name: few-symbols}
spec: {length: 24, symbols: 4, symbolCharacters: "-_"}`,
			"symbols may not exceed the number of symbolCharacters"},
		{"ClusterGenerator without the configuration's namespace", `
apiVersion: generator.external-secrets.io/v2alpha1
kind: ClusterGenerator
metadata: {name: validation-no-namespace}
spec:
  providerConfig: {providerRef: {kind: Password, name: p}}`,
			"providerConfig.providerRef.namespace is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := apply(t, ns, tc.manifest)
			if err == nil {
				t.Fatalf("accepted; want rejection mentioning %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("rejected with %q; want a message mentioning %q", err, tc.want)
			}
		})
	}
}

// TestUpstreamStyleManifestGetsDefaults applies an ExternalSecret written for
// upstream ESO (no store apiVersion, no target) and checks it is accepted with
// the documented defaults.
func TestUpstreamStyleManifestGetsDefaults(t *testing.T) {
	ns := env.Namespace(t, "defaults", nil)
	obj, err := apply(t, ns, `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: upstream}
spec:
  secretStoreRef: {name: vault-backend, kind: SecretStore}
  data:
  - secretKey: password
    remoteRef: {key: db, property: password}
  dataFrom:
  - extract: {key: app}`)
	if err != nil {
		t.Fatalf("upstream-style manifest rejected: %v", err)
	}
	for path, want := range map[string]string{
		"spec.refreshInterval":       "1h",
		"spec.target.creationPolicy": "Owner",
		"spec.target.deletionPolicy": "Retain",
	} {
		got, _, _ := unstructured.NestedString(obj.Object, strings.Split(path, ".")...)
		if got != want {
			t.Errorf("%s = %q, want default %q", path, got, want)
		}
	}

	if _, err := apply(t, ns, `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: per-entry-stores}
spec:
  data:
  - {secretKey: a, remoteRef: {key: k}, sourceRef: {storeRef: {name: one}}}
  dataFrom:
  - {extract: {key: k}, sourceRef: {storeRef: {name: two, kind: ClusterSecretStore}}}`); err != nil {
		t.Fatalf("ExternalSecret with a sourceRef on every entry and no secretStoreRef rejected: %v", err)
	}

	store, err := apply(t, ns, `
apiVersion: secretstore.external-secrets.io/v2alpha1
kind: SecretStore
metadata: {name: defaults}
spec:
  providerConfig: {providerRef: {kind: Fake, name: f}}`)
	if err != nil {
		t.Fatalf("minimal SecretStore rejected: %v", err)
	}
	for path, want := range map[string]string{
		"spec.gatingPolicy":    "Enabled",
		"spec.cachingPolicy":   "ProviderDefined",
		"spec.refreshInterval": "5m",
	} {
		got, _, _ := unstructured.NestedString(store.Object, strings.Split(path, ".")...)
		if got != want {
			t.Errorf("%s = %q, want default %q", path, got, want)
		}
	}
}

// TestPasswordDefaultsAreValid: an empty Password spec gets upstream's
// defaults and passes its own rules.
func TestPasswordDefaultsAreValid(t *testing.T) {
	ns := env.Namespace(t, "password-defaults", nil)
	obj, err := apply(t, ns, `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: Password
metadata: {name: defaults}
spec: {}`)
	if err != nil {
		t.Fatalf("rejected: %v", err)
	}
	if length, _, _ := unstructured.NestedInt64(obj.Object, "spec", "length"); length != 24 {
		t.Fatalf("length defaulted to %d, want 24", length)
	}
	if enc, _, _ := unstructured.NestedString(obj.Object, "spec", "encoding"); enc != "raw" {
		t.Fatalf("encoding defaulted to %q, want raw", enc)
	}
	if _, err := apply(t, ns, `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: Password
metadata: {name: upstream}
spec: {length: 32, allowRepeat: true, noUpper: false, encoding: base64url, secretKeys: [password, backup]}`); err != nil {
		t.Fatalf("upstream's Password spec rejected: %v", err)
	}
}
