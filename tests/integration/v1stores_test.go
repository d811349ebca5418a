package integration

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
	"github.com/eso-dev/eso/app/v1compat"
	"github.com/eso-dev/eso/providers/aws/awstest"
	"github.com/eso-dev/eso/providers/gcp/gcptest"
	"github.com/eso-dev/eso/providers/gcp/secretmanager"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
)

// applyYAML creates every document of manifests in namespace ns (cluster
// objects ignore it), as kubectl apply would: unknown fields are refused
// (strict field validation), not dropped.
func applyYAML(t *testing.T, ns, manifests string) {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			if err.Error() == "EOF" {
				return
			}
			t.Fatalf("decoding manifests: %v", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		cluster := strings.HasPrefix(u.GetKind(), "Cluster")
		if !cluster {
			u.SetNamespace(ns)
		}
		if err := env.Client.Create(context.Background(), &u, client.FieldValidation("Strict")); err != nil {
			t.Fatalf("applying %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		if cluster {
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), &u) })
		}
	}
}

// TestUpstreamV1StoresSync: stores and ExternalSecrets written as upstream's
// documentation writes them (external-secrets.io/v1, no
// secretStoreRef.apiVersion) sync unchanged against each provider eso ships:
// AWS Secrets Manager and Parameter Store (moto), Vault (dev server), GCP
// Secret Manager (the in-test Secret Manager API), Kubernetes and Fake.
func TestUpstreamV1StoresSync(t *testing.T) {
	ctx := context.Background()
	moto := awstest.StartMoto(t)
	awsCfg := aws.Config{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("seed", "seed", "")}
	if _, err := sm.NewFromConfig(awsCfg, func(o *sm.Options) { o.BaseEndpoint = aws.String(moto) }).CreateSecret(ctx,
		&sm.CreateSecretInput{Name: aws.String("v1/db"), SecretString: aws.String(`{"user":"sm-user","password":"sm-pw"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := ssm.NewFromConfig(awsCfg, func(o *ssm.Options) { o.BaseEndpoint = aws.String(moto) }).PutParameter(ctx,
		&ssm.PutParameterInput{Name: aws.String("/v1/api-key"), Value: aws.String("ps-value"), Type: "SecureString"}); err != nil {
		t.Fatal(err)
	}
	vault := vaulttest.Start(t)
	if _, err := vault.Logical().Write("secret/data/v1/app", map[string]any{"data": map[string]any{"token": "vault-value"}}); err != nil {
		t.Fatal(err)
	}
	gcp, _ := gcptest.Start(t)
	tokens := gcp.StartTokenEndpoint(t)
	gcp.Add("projects/p/secrets/v1-cert", []byte("gcp-value"), nil)

	ns := env.Namespace(t, "v1", nil)
	shared := env.Namespace(t, "v1-shared", nil)
	runEso(t, testConfig(),
		withProviders(map[string]func(plugin.Deps) plugin.Provider{secretmanager.Kind: gcpProvider(nil)}),
		fx.Decorate(func(v1compat.Endpoints) v1compat.Endpoints {
			return v1compat.Endpoints{AWSSecretsManager: moto, AWSParameterStore: moto, GCPSecretManager: gcp.Addr}
		}))

	key := base64.StdEncoding.EncodeToString(tokens.Key(t, "reader@p.iam.gserviceaccount.com"))
	create(t, plainSecret(shared, "db", map[string]string{"password": "k8s-pw"}))
	applyYAML(t, ns, fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata: {name: awssm-secret}
stringData: {access-key: AKIDEXAMPLE, secret-access-key: example}
---
apiVersion: v1
kind: Secret
metadata: {name: vault-token}
stringData: {token: %[1]s}
---
apiVersion: v1
kind: Secret
metadata: {name: gcpsm-secret}
data: {secret-access-credentials: %[2]s}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: k8s-reader}
---
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: aws-secretsmanager}
spec:
  provider:
    aws:
      service: SecretsManager
      region: eu-central-1
      auth:
        secretRef:
          accessKeyIDSecretRef: {name: awssm-secret, key: access-key}
          secretAccessKeySecretRef: {name: awssm-secret, key: secret-access-key}
---
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: aws-parameterstore}
spec:
  provider:
    aws:
      service: ParameterStore
      region: eu-central-1
      auth:
        secretRef:
          accessKeyIDSecretRef: {name: awssm-secret, key: access-key}
          secretAccessKeySecretRef: {name: awssm-secret, key: secret-access-key}
---
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: vault-backend}
spec:
  provider:
    vault:
      server: %[3]q
      path: secret
      version: v2
      auth:
        tokenSecretRef: {name: vault-token, key: token}
---
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: gcp-store}
spec:
  provider:
    gcpsm:
      projectID: p
      auth:
        secretRef:
          secretAccessKeySecretRef: {name: gcpsm-secret, key: secret-access-credentials}
---
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: k8s-store}
spec:
  provider:
    kubernetes:
      remoteNamespace: %[4]s
      server:
        caProvider: {type: ConfigMap, name: kube-root-ca.crt, key: ca.crt}
      auth:
        serviceAccount: {name: k8s-reader}
---
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: fake}
spec:
  provider:
    fake:
      data:
        - {key: /foo/bar, value: HELLO1, version: v1}
        - {key: /foo/bar, value: HELLO2}
        - {key: /foo/baz, value: '{"john": "doe"}', version: v1}
`, vault.Token(), key, vault.Address(), shared))
	// The Kubernetes store's ServiceAccount may read exactly one Secret.
	applyYAML(t, shared, fmt.Sprintf(`
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: read-db}
rules: [{apiGroups: [""], resources: [secrets], verbs: [get], resourceNames: [db]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: read-db}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: read-db}
subjects: [{kind: ServiceAccount, name: k8s-reader, namespace: %s}]
`, ns))
	for _, name := range []string{"aws-secretsmanager", "aws-parameterstore", "vault-backend", "gcp-store", "k8s-store", "fake"} {
		store := &v1stores.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
		// As upstream's column: what the store can do, once checked.
		if store.Status.Capabilities != "ReadWrite" {
			t.Errorf("%s: status.capabilities = %q, want ReadWrite", name, store.Status.Capabilities)
		}
	}

	applyYAML(t, ns, `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: from-aws-sm}
spec:
  refreshInterval: 1h
  secretStoreRef: {name: aws-secretsmanager, kind: SecretStore}
  target: {name: from-aws-sm, creationPolicy: Owner}
  data:
    - secretKey: password
      remoteRef: {key: v1/db, property: password}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: from-aws-ps}
spec:
  refreshInterval: 1h
  secretStoreRef: {name: aws-parameterstore, kind: SecretStore}
  target: {name: from-aws-ps}
  data:
    - secretKey: api-key
      remoteRef: {key: /v1/api-key}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: from-vault}
spec:
  refreshInterval: 15s
  secretStoreRef: {name: vault-backend, kind: SecretStore}
  target: {name: from-vault}
  data:
    - secretKey: token
      remoteRef: {key: v1/app, property: token}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: from-gcp}
spec:
  refreshInterval: 1h
  secretStoreRef: {kind: SecretStore, name: gcp-store}
  target: {name: from-gcp}
  data:
    - secretKey: cert
      remoteRef: {key: v1-cert}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: from-k8s}
spec:
  refreshInterval: 1h
  secretStoreRef: {kind: SecretStore, name: k8s-store}
  target: {name: from-k8s}
  data:
    - secretKey: password
      remoteRef: {key: db, property: password}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: from-fake}
spec:
  refreshInterval: 1h
  secretStoreRef: {name: fake, kind: SecretStore}
  target: {name: from-fake}
  data:
    - secretKey: foo_bar
      remoteRef: {key: /foo/bar, version: v1}
  dataFrom:
    - extract: {key: /foo/baz, version: v1}
`)
	waitSecretData(t, ns, "from-aws-sm", map[string]string{"password": "sm-pw"})
	waitSecretData(t, ns, "from-aws-ps", map[string]string{"api-key": "ps-value"})
	waitSecretData(t, ns, "from-vault", map[string]string{"token": "vault-value"})
	waitSecretData(t, ns, "from-gcp", map[string]string{"cert": "gcp-value"})
	waitSecretData(t, ns, "from-k8s", map[string]string{"password": "k8s-pw"})
	waitSecretData(t, ns, "from-fake", map[string]string{"foo_bar": "HELLO1", "john": "doe"})

	// A PushSecret as upstream writes it pushes through the v1 store.
	create(t, plainSecret(ns, "to-push", map[string]string{"api-key": "pushed-value"}))
	applyYAML(t, ns, `
apiVersion: external-secrets.io/v1alpha1
kind: PushSecret
metadata: {name: push-to-vault}
spec:
  refreshInterval: 1h
  secretStoreRefs: [{name: vault-backend, kind: SecretStore}]
  selector: {secret: {name: to-push}}
  data:
    - match: {secretKey: api-key, remoteRef: {remoteKey: v1/pushed, property: api-key}}
`)
	eventually(t, "the value pushed to Vault through the v1 store", func() error {
		got, err := vault.KVv2("secret").Get(ctx, "v1/pushed")
		if err != nil {
			return err
		}
		if got.Data["api-key"] != "pushed-value" {
			return fmt.Errorf("vault holds %v", got.Data)
		}
		return nil
	})
}

// TestV1StoreRules: a v1 store eso cannot serve as written says which field
// and what to write instead, and its ExternalSecrets are gated; a namespaced
// v1 store never reads another namespace; a v1 ClusterSecretStore follows
// its conditions; with a v1 and a v2alpha1 store of one name, no apiVersion
// means the v1 store and an explicit one the v2alpha1 store.
func TestV1StoreRules(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "v1-rules", nil)
	other := env.Namespace(t, "v1-other", nil)
	create(t, plainSecret(other, "token", map[string]string{"token": "stolen"}))
	applyYAML(t, ns, fmt.Sprintf(`
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: ldap}
spec:
  provider:
    vault:
      server: http://127.0.0.1:1
      auth: {ldap: {path: ldap, username: u, secretRef: {name: p, key: k}}}
---
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: cross}
spec:
  provider:
    vault:
      server: http://127.0.0.1:1
      auth: {tokenSecretRef: {name: token, key: token, namespace: %s}}
---
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: same}
spec:
  provider:
    fake: {data: [{key: k, value: from-v1}]}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: gated}
spec:
  refreshInterval: 1h
  secretStoreRef: {name: ldap}
  data: [{secretKey: k, remoteRef: {key: k}}]
`, other))
	msg := waitReady(t, &v1stores.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ldap"}}, metav1.ConditionFalse, ssv2.ReasonInvalidProviderConfig)
	if !strings.Contains(msg, "spec.provider.vault.auth.ldap: not supported; use tokenSecretRef") {
		t.Errorf("the store's message does not name the field and what to use: %s", msg)
	}
	msg = waitReady(t, &v1stores.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cross"}}, metav1.ConditionFalse, ssv2.ReasonInvalidProviderConfig)
	if !strings.Contains(msg, "a SecretStore reads only its own namespace") {
		t.Errorf("a SecretStore naming another namespace is not refused for it: %s", msg)
	}
	gated := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gated"}}
	waitReady(t, gated, metav1.ConditionFalse, esv1.ReasonStoreNotReady)

	// One name, both APIs.
	create(t, fakeConfig(ns, "same", map[string]string{"k": "from-v2"}), secretStore(ns, "same", storeSpec("Fake", "same", "")))
	v1es := externalSecret(ns, "v1-default", "SecretStore", "same", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	v2es := externalSecret(ns, "v2-explicit", "SecretStore", "same", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	v2es.Spec.SecretStoreRef.APIVersion = esv1.StoreAPIVersionV2Alpha1
	create(t, v1es, v2es)
	waitSecretData(t, ns, "v1-default", map[string]string{"k": "from-v1"})
	waitSecretData(t, ns, "v2-explicit", map[string]string{"k": "from-v2"})

	// A v1 ClusterSecretStore admits only the namespaces its conditions name.
	allowed := env.Namespace(t, "v1-allowed", map[string]string{"team": "a"})
	applyYAML(t, "", `
apiVersion: external-secrets.io/v1
kind: ClusterSecretStore
metadata: {name: v1-conditions}
spec:
  conditions: [{namespaceSelector: {matchLabels: {team: a}}}]
  provider:
    fake: {data: [{key: k, value: cluster}]}
`)
	in := externalSecret(allowed, "in", "ClusterSecretStore", "v1-conditions", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	out := externalSecret(ns, "out", "ClusterSecretStore", "v1-conditions", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	create(t, in, out)
	waitSecretData(t, allowed, "in", map[string]string{"k": "cluster"})
	waitReady(t, out, metav1.ConditionFalse, esv1.ReasonStoreNotAllowed)
	consistently(t, 2*time.Second, "no Secret from a store that does not admit the namespace", func() error {
		if secretExists(t, ns, "out") {
			return fmt.Errorf("synced")
		}
		return nil
	})
	var leaked corev1.Secret
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "gated"}, &leaked); err == nil {
		t.Errorf("a gated ExternalSecret wrote a Secret")
	}
}

// TestShadowingV1StoreIsNamed: upstream's fake-store example (a v1
// SecretStore named fake) applied beside eso's store of that name takes
// over an ExternalSecret whose storeRef has no apiVersion, as the README
// says. The failure that follows names the store it now uses, apiVersion
// and all, in Ready and in the Warning event, and the message says that
// both exist and how to pin eso's.
func TestShadowingV1StoreIsNamed(t *testing.T) {
	ctx := context.Background()
	runEso(t, testConfig())
	ns := env.Namespace(t, "shadowed", nil)
	es := externalSecret(ns, "app", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	create(t, fakeConfig(ns, "fake", map[string]string{"k": "from-v2"}), secretStore(ns, "fake", storeSpec("Fake", "fake", "")), es)
	waitSecretData(t, ns, "app", map[string]string{"k": "from-v2"})

	applyYAML(t, ns, `
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: fake}
spec:
  provider:
    fake: {data: [{key: other, value: upstream-example}]}
`)
	msg := waitReady(t, es, metav1.ConditionFalse, esv1.ReasonSecretSyncedError)
	for _, want := range []string{
		"SecretStore fake (external-secrets.io/v1): ",
		"SecretStore fake exists as external-secrets.io/v1 and as secretstore.external-secrets.io/v2alpha1",
		"set secretStoreRef.apiVersion to secretstore.external-secrets.io/v2alpha1",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("Ready message %q does not contain %q", msg, want)
		}
	}
	eventually(t, "a Warning event naming the store", func() error {
		var events corev1.EventList
		if err := env.Client.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return err
		}
		var newEvents eventsv1.EventList
		if err := env.Client.List(ctx, &newEvents, client.InNamespace(ns)); err != nil {
			return err
		}
		var seen []string
		for _, e := range events.Items {
			if e.InvolvedObject.Name == es.Name && e.Type == corev1.EventTypeWarning {
				seen = append(seen, e.Message)
			}
		}
		for _, e := range newEvents.Items {
			if e.Regarding.Name == es.Name && e.Type == corev1.EventTypeWarning {
				seen = append(seen, e.Note)
			}
		}
		for _, m := range seen {
			if strings.Contains(m, "SecretStore fake (external-secrets.io/v1): ") && strings.Contains(m, "exists as external-secrets.io/v1 and as") {
				return nil
			}
		}
		return fmt.Errorf("warnings: %q", seen)
	})

	// Pinned with apiVersion, it is eso's store again.
	patch := []byte(`{"spec":{"secretStoreRef":{"apiVersion":"secretstore.external-secrets.io/v2alpha1"}}}`)
	if err := env.Client.Patch(ctx, es, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)
}
