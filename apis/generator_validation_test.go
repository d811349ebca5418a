package apis_test

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The cloud generator kinds' rules, on the control plane the other
// validation tests use.

// TestCloudGeneratorMistakesAreRejected applies cloud generator manifests a
// user could get wrong and checks the API server says what to fix.
func TestCloudGeneratorMistakesAreRejected(t *testing.T) {
	ns := env.Namespace(t, "generator-validation", nil)
	cases := []struct{ name, manifest, want string }{
		{"VaultDynamicSecret without auth method", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: VaultDynamicSecret
metadata: {name: no-auth}
spec: {server: "http://vault:8200", path: database/creds/app, auth: {}}`,
			"auth needs exactly one of tokenSecretRef, appRole, kubernetes, jwt or cert"},
		{"VaultDynamicSecret with the /v1/ prefix", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: VaultDynamicSecret
metadata: {name: v1-path}
spec: {server: "http://vault:8200", path: /v1/database/creds/app, auth: {tokenSecretRef: {name: t, key: token}}}`,
			"path is relative to /v1/"},
		{"VaultDynamicSecret with a method Vault does not take", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: VaultDynamicSecret
metadata: {name: patch}
spec: {server: "http://vault:8200", path: x, method: PATCH, auth: {tokenSecretRef: {name: t, key: token}}}`,
			`supported values: "GET", "LIST", "POST", "PUT", "DELETE"`},
		{"VaultDynamicSecret with parameters that are not an object", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: VaultDynamicSecret
metadata: {name: list-params}
spec: {server: "http://vault:8200", path: x, method: POST, parameters: [1, 2], auth: {tokenSecretRef: {name: t, key: token}}}`,
			"spec.parameters: Invalid value"},
		{"VaultDynamicSecret with getParameters on a POST", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: VaultDynamicSecret
metadata: {name: post-query}
spec: {server: "http://vault:8200", path: x, method: POST, getParameters: {a: ["1"]}, auth: {tokenSecretRef: {name: t, key: token}}}`,
			"getParameters are sent with method GET only"},
		{"VaultDynamicSecret in both shapes", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: VaultDynamicSecret
metadata: {name: both-shapes}
spec:
  path: x
  server: "http://vault:8200"
  auth: {tokenSecretRef: {name: t, key: token}}
  provider: {server: "http://vault:8200", auth: {tokenSecretRef: {name: t, key: token}}}`,
			"set the connection either under provider (upstream's shape) or at spec level"},
		{"VaultDynamicSecret in upstream's shape with a spec-level CA", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: VaultDynamicSecret
metadata: {name: provider-and-ca}
spec:
  path: x
  caProvider: {type: Secret, name: ca, key: ca.crt}
  provider: {server: "http://vault:8200", auth: {tokenSecretRef: {name: t, key: token}}}`,
			"set the connection either under provider (upstream's shape) or at spec level"},
		{"VaultDynamicSecret in neither shape", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: VaultDynamicSecret
metadata: {name: no-shape}
spec: {path: x}`,
			"server and auth are required when provider is not set"},
		{"VaultDynamicSecret with a server but no auth", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: VaultDynamicSecret
metadata: {name: no-auth-at-all}
spec: {path: x, server: "http://vault:8200"}`,
			"server and auth are required when provider is not set"},
		{"Password with secretKey and secretKeys", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: Password
metadata: {name: two-key-fields}
spec: {secretKey: a, secretKeys: [b]}`,
			"set secretKey or secretKeys, not both"},
		{"Password with a key listed twice", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: Password
metadata: {name: duplicate-keys}
spec: {secretKeys: [a, a]}`,
			"Duplicate value"},
		{"Password with an encoding upstream does not have", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: Password
metadata: {name: rot13}
spec: {encoding: rot13}`,
			`supported values: "base64", "base64url", "base32", "hex", "raw"`},
		{"VaultDynamicSecret with two CA sources", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: VaultDynamicSecret
metadata: {name: two-cas}
spec:
  server: https://vault:8200
  path: x
  caBundle: Zm9v
  caProvider: {type: Secret, name: ca, key: ca.crt}
  auth: {tokenSecretRef: {name: t, key: token}}`,
			"set caBundle or caProvider, not both"},
		{"ECRAuthorizationToken with web identity but no role", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: ECRAuthorizationToken
metadata: {name: jwt-no-role}
spec: {region: eu-central-1, auth: {jwt: {serviceAccountRef: {name: sa}}}}`,
			"auth.jwt needs role"},
		{"STSSessionToken with an MFA code but no device", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: STSSessionToken
metadata: {name: code-no-device}
spec: {region: eu-central-1, requestParameters: {tokenCode: "123456"}}`,
			"serialNumber and tokenCode go together"},
		{"STSSessionToken shorter than AWS allows", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: STSSessionToken
metadata: {name: short}
spec: {region: eu-central-1, requestParameters: {sessionDuration: 60}}`,
			"should be greater than or equal to 900"},
		{"GCRAccessToken with two auth methods", `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: GCRAccessToken
metadata: {name: two-auths}
spec:
  projectID: p
  auth:
    secretRef: {secretAccessKeySecretRef: {name: k, key: key.json}}
    workloadIdentity: {clusterLocation: l, clusterName: c, serviceAccountRef: {name: sa}}`,
			"auth needs exactly one of secretRef or workloadIdentity"},
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

// TestCloudGeneratorDefaults: a minimal VaultDynamicSecret reads with GET
// and outputs the response's data, as upstream does.
func TestCloudGeneratorDefaults(t *testing.T) {
	ns := env.Namespace(t, "generator-defaults", nil)
	obj, err := apply(t, ns, `
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: VaultDynamicSecret
metadata: {name: minimal}
spec: {server: "http://vault:8200", path: database/creds/app, auth: {tokenSecretRef: {name: t, key: token}}}`)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := obj.Object["spec"].(map[string]any)
	if spec["method"] != "GET" || spec["resultType"] != "Data" {
		t.Errorf("defaults: method %v, resultType %v", spec["method"], spec["resultType"])
	}
}

// TestUpstreamVaultDynamicSecretsApply: the VaultDynamicSecrets of
// upstream's documentation (PKI issue with kubernetes auth, a KV GET with
// getParameters) apply with their spec unchanged, the connection under
// spec.provider.
func TestUpstreamVaultDynamicSecretsApply(t *testing.T) {
	ns := env.Namespace(t, "generator-upstream-vault", nil)
	for name, spec := range map[string]string{
		"pki-example": `
  path: "/pki/issue/example-dot-com"
  method: "POST"
  parameters:
    common_name: "localhost"
    ip_sans: "127.0.0.1,127.0.0.11"
  resultType: "Data"
  provider:
    server: "http://vault.default.svc.cluster.local:8200"
    auth:
      kubernetes:
        mountPath: "kubernetes"
        role: "external-secrets-operator"
        serviceAccountRef:
          name: "default"`,
		"vault-get-example": `
  path: "/kv/data/example"
  method: "GET"
  getParameters:
    version:
    - "1"
  resultType: "Data"
  controller: ""
  provider:
    server: "http://vault.default.svc.cluster.local:8200"
    path: secret
    version: v2
    auth:
      kubernetes:
        mountPath: "kubernetes"
        role: "external-secrets-operator"
        serviceAccountRef:
          name: "default"`,
	} {
		obj, err := apply(t, ns, "apiVersion: provider.generator.external-secrets.io/v2alpha1\nkind: VaultDynamicSecret\nmetadata: {name: "+name+"}\nspec:"+spec)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var written map[string]any
		if err := yaml.Unmarshal([]byte(spec), &written); err != nil {
			t.Fatal(err)
		}
		if missing := notKept("spec", written, obj.Object["spec"]); len(missing) > 0 {
			t.Errorf("%s: the API server did not keep %v", name, missing)
		}
	}
}

// notKept lists the paths of want whose value got does not hold (got may
// hold more: defaults).
func notKept(path string, want, got any) []string {
	if w, ok := want.(map[string]any); ok {
		g, _ := got.(map[string]any)
		var missing []string
		for k, v := range w {
			missing = append(missing, notKept(path+"."+k, v, g[k])...)
		}
		return missing
	}
	if fmt.Sprint(want) != fmt.Sprint(got) {
		return []string{path}
	}
	return nil
}
