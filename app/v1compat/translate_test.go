package v1compat

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	provv2 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
)

// provider decodes a provider block written as in a manifest.
func provider(t *testing.T, doc string) v1stores.SecretStoreProvider {
	t.Helper()
	var p v1stores.SecretStoreProvider
	if err := yaml.UnmarshalStrict([]byte(doc), &p); err != nil {
		t.Fatalf("decoding %s: %v", doc, err)
	}
	return p
}

// TestTranslateFieldByField: each upstream field eso serves lands in the
// v2 configuration field that does the same.
func TestTranslateFieldByField(t *testing.T) {
	endpoints := Endpoints{AWSSecretsManager: "http://sm", AWSParameterStore: "http://ssm", AWSSTS: "http://sts", GCPSecretManager: "gcp:443"}
	cases := []struct {
		name    string
		block   string
		cluster bool
		want    any
		scope   ssv2.AuthenticationScope
		credsNS string
	}{
		{name: "aws secrets manager, static keys", block: `
aws:
  service: SecretsManager
  region: eu-central-1
  role: arn:aws:iam::123456789012:role/reader
  externalID: ext
  prefix: team/
  sessionTags: [{key: team, value: a}]
  auth:
    secretRef:
      accessKeyIDSecretRef: {name: aws, key: id}
      secretAccessKeySecretRef: {name: aws, key: secret}
      sessionTokenSecretRef: {name: aws, key: token}`,
			want: &provv2.AWSSecretManager{Spec: provv2.AWSSpec{Region: "eu-central-1", Role: "arn:aws:iam::123456789012:role/reader",
				ExternalID: "ext", Prefix: "team/", SessionTags: []provv2.AWSSessionTag{{Key: "team", Value: "a"}},
				Endpoint: "http://sm", STSEndpoint: "http://sts",
				Auth: &provv2.AWSAuth{SecretRef: &provv2.AWSAuthSecretRef{AccessKeyID: provv2.SecretKeySelector{Name: "aws", Key: "id"},
					SecretAccessKey: provv2.SecretKeySelector{Name: "aws", Key: "secret"}, SessionToken: &provv2.SecretKeySelector{Name: "aws", Key: "token"}}}}},
			scope: ssv2.ProviderNamespace, credsNS: "team"},
		{name: "aws parameter store, IRSA", block: `
aws:
  service: ParameterStore
  region: us-east-1
  role: arn:aws:iam::123456789012:role/irsa
  auth: {jwt: {serviceAccountRef: {name: eso-reader, audiences: [sts.amazonaws.com]}}}`,
			want: &provv2.AWSParameterStore{Spec: provv2.AWSSpec{Region: "us-east-1", Role: "arn:aws:iam::123456789012:role/irsa",
				Endpoint: "http://ssm", STSEndpoint: "http://sts",
				Auth: &provv2.AWSAuth{JWT: &provv2.AWSJWTAuth{ServiceAccountRef: provv2.KubernetesServiceAccount{Name: "eso-reader", Audiences: []string{"sts.amazonaws.com"}}}}}},
			scope: ssv2.ProviderNamespace, credsNS: "team"},
		{name: "gcp, key in a Secret of a named namespace", cluster: true, block: `
gcpsm:
  projectID: my-project
  location: europe-west1
  auth: {secretRef: {secretAccessKeySecretRef: {name: gcp, key: sa.json, namespace: creds}}}`,
			want: &provv2.GCPSecretManager{Spec: provv2.GCPSecretManagerSpec{ProjectID: "my-project", Location: "europe-west1", Endpoint: "gcp:443",
				Auth: &provv2.GCPAuth{SecretRef: &provv2.GCPAuthSecretRef{SecretAccessKey: provv2.SecretKeySelector{Name: "gcp", Key: "sa.json"}}}}},
			scope: ssv2.ProviderNamespace, credsNS: "creds"},
		{name: "gcp workload identity, referent", cluster: true, block: `
gcpsm:
  projectID: p
  auth: {workloadIdentity: {clusterLocation: europe-west1, clusterName: c, clusterProjectID: cp, serviceAccountRef: {name: sa}}}`,
			want: &provv2.GCPSecretManager{Spec: provv2.GCPSecretManagerSpec{ProjectID: "p", Endpoint: "gcp:443",
				Auth: &provv2.GCPAuth{WorkloadIdentity: &provv2.GCPWorkloadIdentity{ServiceAccountRef: provv2.KubernetesServiceAccount{Name: "sa"},
					ClusterLocation: "europe-west1", ClusterName: "c", ClusterProjectID: "cp"}}}},
			scope: ssv2.ManifestNamespace},
		{name: "vault token, kv v1 in a namespace", block: `
vault:
  server: https://vault:8200
  path: kv
  version: v1
  namespace: team
  caProvider: {type: ConfigMap, name: ca, key: ca.crt}
  auth: {tokenSecretRef: {name: vault, key: token}}`,
			want: &provv2.Vault{Spec: provv2.VaultSpec{Server: "https://vault:8200", Path: "kv", Version: "v1", Namespace: "team",
				CAProvider: &provv2.CAProvider{Type: "ConfigMap", Name: "ca", Key: "ca.crt"},
				Auth:       provv2.VaultAuth{TokenSecretRef: &provv2.SecretKeySelector{Name: "vault", Key: "token"}}}},
			scope: ssv2.ProviderNamespace, credsNS: "team"},
		{name: "vault appRole", block: `
vault: {server: http://vault:8200, path: secret, auth: {appRole: {path: approle, roleId: r, secretRef: {name: v, key: secret-id}}}}`,
			want: &provv2.Vault{Spec: provv2.VaultSpec{Server: "http://vault:8200", Path: "secret", Version: "v2",
				Auth: provv2.VaultAuth{AppRole: &provv2.VaultAppRole{Path: "approle", RoleID: "r", SecretRef: provv2.SecretKeySelector{Name: "v", Key: "secret-id"}}}}},
			scope: ssv2.ProviderNamespace, credsNS: "team"},
		{name: "vault kubernetes", block: `
vault: {server: http://vault:8200, path: secret, auth: {kubernetes: {mountPath: kubernetes, role: reader, serviceAccountRef: {name: sa}}}}`,
			want: &provv2.Vault{Spec: provv2.VaultSpec{Server: "http://vault:8200", Path: "secret", Version: "v2",
				Auth: provv2.VaultAuth{Kubernetes: &provv2.VaultKubernetesAuth{MountPath: "kubernetes", Role: "reader", ServiceAccountRef: provv2.KubernetesServiceAccount{Name: "sa"}}}}},
			scope: ssv2.ProviderNamespace, credsNS: "team"},
		{name: "vault jwt", block: `
vault: {server: http://vault:8200, path: secret, auth: {jwt: {path: jwt, role: j, kubernetesServiceAccountToken: {serviceAccountRef: {name: sa2}, audiences: [vault]}}}}`,
			want: &provv2.Vault{Spec: provv2.VaultSpec{Server: "http://vault:8200", Path: "secret", Version: "v2",
				Auth: provv2.VaultAuth{JWT: &provv2.VaultKubernetesAuth{MountPath: "jwt", Role: "j", ServiceAccountRef: provv2.KubernetesServiceAccount{Name: "sa2", Audiences: []string{"vault"}}}}}},
			scope: ssv2.ProviderNamespace, credsNS: "team"},
		{name: "vault cert", block: `
vault: {server: https://vault:8200, path: secret, auth: {cert: {path: cert, vaultRole: eso, clientCert: {name: c, key: tls.crt}, secretRef: {name: c, key: tls.key}}}}`,
			want: &provv2.Vault{Spec: provv2.VaultSpec{Server: "https://vault:8200", Path: "secret", Version: "v2",
				Auth: provv2.VaultAuth{Cert: &provv2.VaultCertAuth{Path: "cert", Name: "eso", ClientCert: provv2.SecretKeySelector{Name: "c", Key: "tls.crt"},
					SecretRef: provv2.SecretKeySelector{Name: "c", Key: "tls.key"}}}}},
			scope: ssv2.ProviderNamespace, credsNS: "team"},
		{name: "kubernetes in-cluster with a ServiceAccount", block: `
kubernetes:
  remoteNamespace: shared
  server: {url: "https://kubernetes.default.svc", caProvider: {type: ConfigMap, name: kube-root-ca.crt, key: ca.crt}}
  auth: {serviceAccount: {name: reader}}`,
			want: &provv2.Kubernetes{Spec: provv2.KubernetesSpec{RemoteNamespace: "shared",
				Auth: &provv2.KubernetesAuth{ServiceAccount: &provv2.KubernetesServiceAccount{Name: "reader"}}}},
			scope: ssv2.ProviderNamespace, credsNS: "team"},
		{name: "kubernetes without remoteNamespace reads default, as upstream", block: `
kubernetes: {auth: {serviceAccount: {name: reader}}}`,
			want: &provv2.Kubernetes{Spec: provv2.KubernetesSpec{RemoteNamespace: "default",
				Auth: &provv2.KubernetesAuth{ServiceAccount: &provv2.KubernetesServiceAccount{Name: "reader"}}}},
			scope: ssv2.ProviderNamespace, credsNS: "team"},
		{name: "kubernetes of another cluster with a bearer token", block: `
kubernetes:
  remoteNamespace: apps
  server: {url: "https://hub.example.com:6443", caProvider: {type: Secret, name: hub-ca, key: ca.crt}}
  auth: {token: {bearerToken: {name: hub-token, key: token}}}`,
			want: &provv2.Kubernetes{Spec: provv2.KubernetesSpec{RemoteNamespace: "apps",
				Server: &provv2.KubernetesServer{URL: "https://hub.example.com:6443", CAProvider: &provv2.CAProvider{Type: "Secret", Name: "hub-ca", Key: "ca.crt"}},
				Auth:   &provv2.KubernetesAuth{Token: &provv2.KubernetesTokenAuth{BearerToken: provv2.SecretKeySelector{Name: "hub-token", Key: "token"}}}}},
			scope: ssv2.ProviderNamespace, credsNS: "team"},
		{name: "kubernetes of another cluster with a client certificate, its URL without a scheme", block: `
kubernetes:
  remoteNamespace: apps
  server: {url: "10.0.0.1:6443", caBundle: Zm9v}
  auth: {cert: {clientCert: {name: hub-cert, key: tls.crt}, clientKey: {name: hub-cert, key: tls.key}}}`,
			want: &provv2.Kubernetes{Spec: provv2.KubernetesSpec{RemoteNamespace: "apps",
				Server: &provv2.KubernetesServer{URL: "https://10.0.0.1:6443", CABundle: []byte("foo")},
				Auth: &provv2.KubernetesAuth{Cert: &provv2.KubernetesCertAuth{ClientCert: provv2.SecretKeySelector{Name: "hub-cert", Key: "tls.crt"},
					ClientKey: provv2.SecretKeySelector{Name: "hub-cert", Key: "tls.key"}}}}},
			scope: ssv2.ProviderNamespace, credsNS: "team"},
		{name: "fake", block: `
fake: {data: [{key: a, value: "1"}, {key: a, value: "0", version: v1}]}`,
			want:  &provv2.Fake{Spec: provv2.FakeSpec{Data: []provv2.FakeSecret{{Key: "a", Value: "1"}, {Key: "a", Value: "0", Version: "v1"}}}},
			scope: ssv2.ProviderNamespace, credsNS: "team"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := "team"
			if tc.cluster {
				ns = ""
			}
			got := Translate(provider(t, tc.block), tc.cluster, ns, "store", endpoints)
			if err := got.Err(); err != nil {
				t.Fatalf("translation refused: %v", err)
			}
			// Name and namespace are the store's; compare the rest.
			if got.Inline.GetName() != "store" || got.Inline.GetNamespace() != tc.credsNS {
				t.Errorf("configuration is %s/%s, want %s/store", got.Inline.GetNamespace(), got.Inline.GetName(), tc.credsNS)
			}
			got.Inline.SetName("")
			got.Inline.SetNamespace("")
			if !equality.Semantic.DeepEqual(got.Inline, tc.want) {
				a, _ := yaml.Marshal(got.Inline)
				b, _ := yaml.Marshal(tc.want)
				t.Errorf("translated to\n%s\nwant\n%s", a, b)
			}
			if got.Scope != tc.scope || got.Config.ProviderRef.Namespace != tc.credsNS || got.Config.ProviderRef.Kind != kindOf(got.Inline) {
				t.Errorf("scope %s, providerRef %+v; want scope %s in namespace %q", got.Scope, got.Config.ProviderRef, tc.scope, tc.credsNS)
			}
		})
	}
}

// TestTranslateRefusesWhatEsoCannotServe: every refused field is named in
// the error with what to write instead, and a namespaced store never
// reaches another namespace.
func TestTranslateRefusesWhatEsoCannotServe(t *testing.T) {
	cases := []struct {
		name, block string
		cluster     bool
		want        []string
	}{
		{"SecretStore naming another namespace", `
vault: {server: "http://v", auth: {tokenSecretRef: {name: t, key: k, namespace: other}}}`, false,
			[]string{"spec.provider.vault.auth.tokenSecretRef.namespace: a SecretStore reads only its own namespace"}},
		{"SecretStore ServiceAccount of another namespace", `
kubernetes: {auth: {serviceAccount: {name: sa, namespace: kube-system}}}`, false,
			[]string{"spec.provider.kubernetes.auth.serviceAccount.namespace: a SecretStore reads only its own namespace"}},
		{"ClusterSecretStore naming two namespaces", `
aws: {service: SecretsManager, region: eu-west-1, auth: {secretRef: {accessKeyIDSecretRef: {name: a, key: k, namespace: ns-x}, secretAccessKeySecretRef: {name: a, key: s, namespace: ns-y}}}}`, true,
			[]string{"must all name one namespace, or none", "these name ns-x, ns-y"}},
		{"vault methods eso lacks", `
vault: {server: "http://v", headers: {X: y}, tls: {certSecretRef: {name: c, key: k}}, auth: {ldap: {path: ldap, username: u, secretRef: {name: p, key: k}}}}`, false,
			[]string{"spec.provider.vault.auth.ldap: not supported", "spec.provider.vault.headers", "spec.provider.vault.tls"}},
		{"vault userPass", `
vault: {server: "http://v", path: secret, auth: {userPass: {path: up, username: u}}}`, false,
			[]string{"spec.provider.vault.auth.userPass: not supported"}},
		{"vault over another scheme", `
vault: {server: "unix:///var/run/vault.sock", path: secret, auth: {tokenSecretRef: {name: t, key: k}}}`, false,
			[]string{"spec.provider.vault.server: must be an http:// or https:// address"}},
		{"vault jwt from a Secret", `
vault: {server: "http://v", auth: {jwt: {path: jwt, secretRef: {name: j, key: k}}}}`, false,
			[]string{"spec.provider.vault.auth.jwt.secretRef: a JWT stored in a Secret is not supported; use kubernetesServiceAccountToken"}},
		{"aws role chaining and certificate manager", `
aws: {service: CertificateManager, region: eu-west-1, additionalRoles: [a], sessionTagsPolicy: Simple}`, false,
			[]string{"spec.provider.aws.service: eso serves SecretsManager and ParameterStore", "additionalRoles", "sessionTagsPolicy"}},
		{"aws IRSA without role", `
aws: {service: SecretsManager, region: eu-west-1, auth: {jwt: {serviceAccountRef: {name: sa}}}}`, false,
			[]string{"spec.provider.aws.auth.jwt: eso exchanges the ServiceAccount's token for the role in spec.provider.aws.role"}},
		{"gcp federation", `
gcpsm: {projectID: p, auth: {workloadIdentityFederation: {audience: a}}}`, false,
			[]string{"spec.provider.gcpsm.auth.workloadIdentityFederation: not supported"}},
		{"kubernetes CA of another namespace (CVE-2026-42875)", `
kubernetes: {server: {url: "https://10.0.0.1:6443", caProvider: {type: Secret, name: ca, key: ca.crt, namespace: kube-system}}, auth: {token: {bearerToken: {name: t, key: k}}}}`, false,
			[]string{"spec.provider.kubernetes.server.caProvider.namespace: a SecretStore reads only its own namespace"}},
		{"kubernetes token and certificate of another namespace", `
kubernetes: {server: {url: "https://10.0.0.1:6443"}, auth: {cert: {clientCert: {name: c, key: k, namespace: other}, clientKey: {name: c, key: k, namespace: other}}}}`, false,
			[]string{"spec.provider.kubernetes.auth.cert.clientCert.namespace: a SecretStore reads only its own namespace", "auth.cert.clientKey.namespace"}},
		{"kubernetes bearer token of another namespace", `
kubernetes: {server: {url: "https://10.0.0.1:6443"}, auth: {token: {bearerToken: {name: t, key: k, namespace: other}}}}`, false,
			[]string{"spec.provider.kubernetes.auth.token.bearerToken.namespace: a SecretStore reads only its own namespace"}},
		{"kubernetes of another cluster over http", `
kubernetes: {server: {url: "http://10.0.0.1:8080"}, auth: {token: {bearerToken: {name: t, key: k}}}}`, false,
			[]string{"spec.provider.kubernetes.server.url: eso reaches another cluster's API server over https only"}},
		{"kubernetes with two identities", `
kubernetes: {server: {url: "https://10.0.0.1:6443"}, auth: {token: {bearerToken: {name: t, key: k}}, serviceAccount: {name: sa}}}`, false,
			[]string{"spec.provider.kubernetes.auth: set exactly one of serviceAccount, token or cert"}},
		{"kubernetes with eso's own identity", `
kubernetes: {remoteNamespace: kube-system, server: {caProvider: {type: ConfigMap, name: ca, key: ca.crt, namespace: kube-system}}}`, true,
			[]string{"spec.provider.kubernetes.auth: eso needs auth (serviceAccount, token or cert)"}},
		{"kubernetes of another cluster without auth", `
kubernetes: {server: {url: "https://10.0.0.1:6443"}}`, false,
			[]string{"spec.provider.kubernetes.auth: eso needs auth"}},
		{"vault with an empty auth", `
vault: {server: "http://v", path: secret, auth: {}}`, false,
			[]string{"spec.provider.vault.auth: eso needs an authentication method"}},
		{"vault without its mount", `
vault: {server: "http://v", auth: {tokenSecretRef: {name: t, key: k}}}`, false,
			[]string{"spec.provider.vault.path: eso needs the KV mount"}},
		{"aws IRSA with externalID", `
aws: {service: SecretsManager, region: eu-west-1, role: arn:aws:iam::1:role/r, externalID: x, auth: {jwt: {serviceAccountRef: {name: sa}}}}`, false,
			[]string{"spec.provider.aws.externalID/sessionTags: not sent with auth.jwt"}},
		{"plugin of another namespace", `
plugin: {address: "p:8443", providerRef: {kind: Vault, name: v, namespace: other}}`, false,
			[]string{"spec.provider.plugin.providerRef.namespace: a SecretStore reads only its own namespace"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := "team"
			if tc.cluster {
				ns = ""
			}
			err := Translate(provider(t, tc.block), tc.cluster, ns, "store", Endpoints{}).Err()
			if err == nil {
				t.Fatal("translated; want a refusal")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestPrecedenceAsUpstream: where upstream uses one of two methods set
// together, eso uses the same one and names the other in its notes.
func TestPrecedenceAsUpstream(t *testing.T) {
	got := Translate(provider(t, `
gcpsm:
  projectID: p
  auth:
    secretRef: {secretAccessKeySecretRef: {name: gcp, key: k}}
    workloadIdentity: {clusterLocation: l, clusterName: c, serviceAccountRef: {name: sa}}`), false, "team", "s", Endpoints{})
	if err := got.Err(); err != nil {
		t.Fatal(err)
	}
	gcp := got.Inline.(*provv2.GCPSecretManager)
	if gcp.Spec.Auth.SecretRef == nil || gcp.Spec.Auth.WorkloadIdentity != nil {
		t.Errorf("auth %+v: want secretRef only, as upstream", gcp.Spec.Auth)
	}
	if len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "spec.provider.gcpsm.auth.workloadIdentity: not used") {
		t.Errorf("notes %q", got.Notes)
	}
}

// TestVaultMethodPrecedenceAsUpstream: of several Vault login methods,
// the first in upstream's order is used and the others are named as not
// used, also when a later one is a method eso does not serve.
func TestVaultMethodPrecedenceAsUpstream(t *testing.T) {
	got := Translate(provider(t, `
vault:
  server: http://vault:8200
  path: secret
  auth:
    kubernetes: {mountPath: kubernetes, role: reader, serviceAccountRef: {name: sa}}
    appRole: {path: approle, roleId: r, secretRef: {name: v, key: secret-id}}
    ldap: {path: ldap, username: u}`), false, "team", "s", Endpoints{})
	if err := got.Err(); err != nil {
		t.Fatal(err)
	}
	auth := got.Inline.(*provv2.Vault).Spec.Auth
	if auth.AppRole == nil || auth.Kubernetes != nil {
		t.Errorf("auth %+v: want appRole only, as upstream tries it before kubernetes", auth)
	}
	want := []string{"spec.provider.vault.auth.kubernetes: not used: appRole takes precedence, as upstream",
		"spec.provider.vault.auth.ldap: not used: appRole takes precedence, as upstream"}
	if !slices.Equal(got.Notes, want) {
		t.Errorf("notes %q, want %q", got.Notes, want)
	}
}

// TestPluginBecomesARemoteStore: a plugin block is the providerConfig of a
// v2 store whose provider runs at address.
func TestPluginBecomesARemoteStore(t *testing.T) {
	got := Translate(provider(t, `
plugin:
  address: eso-provider.eso-system.svc:8443
  auth: {clientCertificate: {name: core-client}}
  providerRef: {kind: Vault, name: team-vault}`), false, "team", "store", Endpoints{})
	if err := got.Err(); err != nil {
		t.Fatal(err)
	}
	want := ssv2.ProviderConfig{Address: "eso-provider.eso-system.svc:8443",
		Auth: &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: "core-client"}}, ProviderRef: ssv2.ProviderRef{Kind: "Vault", Name: "team-vault"}}
	if got.Inline != nil || !equality.Semantic.DeepEqual(got.Config, want) {
		t.Errorf("plugin translated to inline %v, config %+v; want config %+v", got.Inline, got.Config, want)
	}
}
