package integration

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/aws/awstest"
	"github.com/eso-dev/eso/providers/gcp/gcptest"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
)

// upstreamGeneratorManifests are generator objects written as upstream's
// documentation describes its generators.external-secrets.io/v1alpha1
// fields (written here, not copied): a Password, a UUID, SSH keys of two
// types, a Fake, an MFA pinned to an RFC 6238 vector (upstream ignores
// algorithm and uses SHA-1: so must eso for upstream's kind), a Vault
// dynamic secret in upstream's provider shape, an ECR login naming both
// auth methods as upstream's documentation does, an STS session with
// upstream's request parameters and a GCR token (moto and the in-test
// Google token service stand in for AWS and Google, through eso's
// endpoint field), and ClusterGenerators embedding a Password and a Fake.
const upstreamGeneratorManifests = `
apiVersion: generators.external-secrets.io/v1alpha1
kind: Password
metadata: {name: db-password}
spec: {length: 20, digits: 4, symbols: 2, symbolCharacters: "-_", noUpper: false, allowRepeat: true, secretKeys: [first, second]}
---
apiVersion: generators.external-secrets.io/v1alpha1
kind: UUID
metadata: {name: request-id}
spec: {}
---
apiVersion: generators.external-secrets.io/v1alpha1
kind: SSHKey
metadata: {name: deploy-key}
spec: {keyType: ed25519, comment: deploy@example.com}
---
apiVersion: generators.external-secrets.io/v1alpha1
kind: SSHKey
metadata: {name: ecdsa-key}
spec: {keyType: ecdsa, keySize: 384}
---
apiVersion: generators.external-secrets.io/v1alpha1
kind: Fake
metadata: {name: fixed}
spec: {data: {foo: bar, baz: bang}}
---
apiVersion: v1
kind: Secret
metadata: {name: totp-seed}
stringData: {token: GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ}
---
apiVersion: generators.external-secrets.io/v1alpha1
kind: MFA
metadata: {name: totp}
spec:
  secret: {name: totp-seed, key: token}
  length: 8
  timePeriod: 30
  algorithm: SHA-256
  when: "2005-03-18T01:58:29Z"
---
apiVersion: v1
kind: Secret
metadata: {name: vault-token}
stringData: {token: %[1]s}
---
apiVersion: generators.external-secrets.io/v1alpha1
kind: VaultDynamicSecret
metadata: {name: random}
spec:
  path: /sys/tools/random/16
  method: POST
  resultType: Data
  provider:
    server: %[2]s
    auth:
      tokenSecretRef: {name: vault-token, key: token}
---
apiVersion: v1
kind: Secret
metadata: {name: aws-creds}
stringData: {key-id: upstream, access-secret: upstream}
---
apiVersion: generators.external-secrets.io/v1alpha1
kind: ECRAuthorizationToken
metadata: {name: ecr}
spec:
  region: eu-west-1
  endpoint: %[4]s
  auth:
    secretRef:
      accessKeyIDSecretRef: {name: aws-creds, key: key-id}
      secretAccessKeySecretRef: {name: aws-creds, key: access-secret}
    jwt:
      serviceAccountRef: {name: registry-puller}
---
apiVersion: generators.external-secrets.io/v1alpha1
kind: STSSessionToken
metadata: {name: sts}
spec:
  region: eu-west-1
  endpoint: %[4]s
  auth:
    secretRef:
      accessKeyIDSecretRef: {name: aws-creds, key: key-id}
      secretAccessKeySecretRef: {name: aws-creds, key: access-secret}
  requestParameters: {sessionDuration: 900, serialNumber: "arn:aws:iam::123456789012:mfa/user", tokenCode: "123456"}
---
apiVersion: v1
kind: Secret
metadata: {name: gcp-key}
data: {key.json: %[5]s}
---
apiVersion: generators.external-secrets.io/v1alpha1
kind: GCRAccessToken
metadata: {name: gcr}
spec:
  projectID: p
  auth:
    secretRef:
      secretAccessKeySecretRef: {name: gcp-key, key: key.json}
---
apiVersion: generators.external-secrets.io/v1alpha1
kind: ClusterGenerator
metadata: {name: %[3]s-password}
spec:
  kind: Password
  generator:
    passwordSpec: {length: 42, digits: 5, symbols: 5, symbolCharacters: "-_$@", noUpper: false, allowRepeat: true}
---
apiVersion: generators.external-secrets.io/v1alpha1
kind: ClusterGenerator
metadata: {name: %[3]s-fake}
spec:
  kind: Fake
  generator:
    fakeSpec: {data: {region: eu-west-1}}
---
apiVersion: generators.external-secrets.io/v1alpha1
kind: ClusterGenerator
metadata: {name: %[3]s-mismatched}
spec:
  kind: UUID
  generator:
    fakeSpec: {data: {a: b}}
`

// TestUpstreamGeneratorManifests: upstream-shaped generator manifests apply
// unchanged (strict field validation) and ExternalSecrets referencing them
// by upstream's apiVersion sync, each generator's output as upstream names
// it.
func TestUpstreamGeneratorManifests(t *testing.T) {
	root := vaulttest.Start(t)
	moto := awstest.StartMoto(t)
	gcp, _ := gcptest.Start(t)
	gcpKey := gcp.StartTokenEndpoint(t).Key(t, "puller@p.iam.gserviceaccount.com")
	runEso(t, testConfig())
	ns := env.Namespace(t, "gen-upstream", nil)
	applyYAML(t, ns, fmt.Sprintf(upstreamGeneratorManifests, vaulttest.RootToken, root.Address(), ns, moto, base64.StdEncoding.EncodeToString(gcpKey)))
	ref := func(kind, name string) esv1.GeneratorRef {
		return esv1.GeneratorRef{APIVersion: "generators.external-secrets.io/v1alpha1", Kind: kind, Name: name}
	}
	for _, es := range []*esv1.ExternalSecret{
		generatedSecret(ns, "password", ref("Password", "db-password")),
		generatedSecret(ns, "uuid", ref("UUID", "request-id")),
		generatedSecret(ns, "ssh", ref("SSHKey", "deploy-key")),
		generatedSecret(ns, "ecdsa", ref("SSHKey", "ecdsa-key")),
		generatedSecret(ns, "fake", ref("Fake", "fixed")),
		generatedSecret(ns, "mfa", ref("MFA", "totp")),
		generatedSecret(ns, "vault", ref("VaultDynamicSecret", "random")),
		generatedSecret(ns, "ecr", ref("ECRAuthorizationToken", "ecr")),
		generatedSecret(ns, "sts", ref("STSSessionToken", "sts")),
		generatedSecret(ns, "gcr", ref("GCRAccessToken", "gcr")),
		generatedSecret(ns, "cluster-password", ref("ClusterGenerator", ns+"-password")),
		generatedSecret(ns, "cluster-fake", ref("ClusterGenerator", ns+"-fake")),
	} {
		create(t, es)
	}

	pw := waitGenerated(t, ns, "password", "second", "")
	if len(pw.Data["first"]) != 20 || len(pw.Data["second"]) != 20 || string(pw.Data["first"]) == string(pw.Data["second"]) {
		t.Errorf("Password secretKeys: %d and %d characters, want two different passwords of 20", len(pw.Data["first"]), len(pw.Data["second"]))
	}
	if id := waitGenerated(t, ns, "uuid", "uuid", ""); len(id.Data["uuid"]) != 36 {
		t.Errorf("UUID %q", id.Data["uuid"])
	}
	key := waitGenerated(t, ns, "ssh", "publicKey", "")
	if !strings.HasPrefix(string(key.Data["publicKey"]), "ssh-ed25519 ") || !strings.HasSuffix(string(key.Data["publicKey"]), " deploy@example.com\n") {
		t.Errorf("SSHKey publicKey %q, want an ssh-ed25519 line with the comment", key.Data["publicKey"])
	}
	if _, err := ssh.ParseRawPrivateKey(key.Data["privateKey"]); err != nil {
		t.Errorf("SSHKey privateKey: %v", err)
	}
	if ec := waitGenerated(t, ns, "ecdsa", "publicKey", ""); !strings.HasPrefix(string(ec.Data["publicKey"]), "ecdsa-sha2-nistp384 ") {
		t.Errorf("ECDSA 384 publicKey %q", ec.Data["publicKey"])
	}
	if f := waitGenerated(t, ns, "fake", "foo", ""); string(f.Data["foo"]) != "bar" || string(f.Data["baz"]) != "bang" {
		t.Errorf("Fake data %v", keys(f.Data))
	}
	mfa := waitGenerated(t, ns, "mfa", "token", "")
	if string(mfa.Data["token"]) != "07081804" || string(mfa.Data["timeLeft"]) != "1" {
		t.Errorf("MFA token %q, %q seconds left, want RFC 6238's SHA-1 vector 07081804 and 1", mfa.Data["token"], mfa.Data["timeLeft"])
	}
	if v := waitGenerated(t, ns, "vault", "random_bytes", ""); len(v.Data["random_bytes"]) == 0 {
		t.Error("VaultDynamicSecret: empty random_bytes")
	}
	if e := waitGenerated(t, ns, "ecr", "proxy_endpoint", ""); len(e.Data["username"]) == 0 || len(e.Data["password"]) == 0 {
		t.Errorf("ECRAuthorizationToken: keys %v", keys(e.Data))
	}
	if s := waitGenerated(t, ns, "sts", "session_token", ""); len(s.Data["access_key_id"]) == 0 {
		t.Errorf("STSSessionToken: keys %v", keys(s.Data))
	}
	if g := waitGenerated(t, ns, "gcr", "password", ""); string(g.Data["username"]) != "oauth2accesstoken" {
		t.Errorf("GCRAccessToken: username %q", g.Data["username"])
	}
	if cp := waitGenerated(t, ns, "cluster-password", "password", ""); len(cp.Data["password"]) != 42 {
		t.Errorf("ClusterGenerator Password: %d characters, want 42", len(cp.Data["password"]))
	}
	if cf := waitGenerated(t, ns, "cluster-fake", "region", ""); string(cf.Data["region"]) != "eu-west-1" {
		t.Errorf("ClusterGenerator Fake: region %q", cf.Data["region"])
	}

	// A ClusterGenerator whose member is not its kind's is refused by name.
	bad := generatedSecret(ns, "mismatched", ref("ClusterGenerator", ns+"-mismatched"))
	create(t, bad)
	if msg := waitReady(t, bad, metav1.ConditionFalse, esv1.ReasonProviderError); !strings.Contains(msg, "no spec.generator member for it") {
		t.Errorf("mismatched ClusterGenerator: Ready message %q", msg)
	}
}
