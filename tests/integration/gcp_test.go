package integration

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers/gcp/gcpauth"
	"github.com/eso-dev/eso/providers/gcp/gcptest"
	"github.com/eso-dev/eso/providers/gcp/secretmanager"
	"github.com/eso-dev/eso/providers/plugin"
)

// runEsoForGCP runs eso with its GCP provider dialling gcptest over
// plaintext (see gcpProvider), using wi's token services for workload
// identity if wi is set.
func runEsoForGCP(t *testing.T, ns string, wi *gcptest.WorkloadIdentity) {
	cfg := testConfig()
	cfg.Namespace = ns
	runEso(t, cfg, withProviders(map[string]func(plugin.Deps) plugin.Provider{secretmanager.Kind: gcpProvider(wi)}))
}

// gcpProvider is the GCP provider dialling gcptest over plaintext (gcptest
// has no TLS, so no configuration could reach it) and, if wi is set, using
// wi's token services for workload identity. The configurations still name
// gcptest as their endpoint and carry real credentials.
func gcpProvider(wi *gcptest.WorkloadIdentity) func(plugin.Deps) plugin.Provider {
	return func(d plugin.Deps) plugin.Provider {
		endpoints := gcpauth.GoogleEndpoints
		if wi != nil {
			endpoints = gcpauth.Endpoints{STS: wi.STS, IAMCredentials: wi.IAMCredentials}
		}
		return secretmanager.Definition(endpoints, gcptest.Insecure()).Registration().NewProvider(d)
	}
}

func gcpKeyConfig(ns, name, endpoint, keySecret string) *provv1.GCPSecretManager {
	return &provv1.GCPSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: provv1.GCPSecretManagerSpec{
		ProjectID: "p", Endpoint: endpoint,
		Auth: &provv1.GCPAuth{SecretRef: &provv1.GCPAuthSecretRef{SecretAccessKey: provv1.SecretKeySelector{Name: keySecret, Key: "key.json"}}},
	}}
}

// TestGCPSecretManagerSync runs eso against gcptest, the Secret Manager API
// served in process, with a service account key whose token endpoint is
// served by the test: data with a property, dataFrom extract and find sync
// into a Secret. While Secret Manager fails (unavailable, throttled) the
// ExternalSecret says so and the Secret stays exactly as it was; it recovers
// by itself. A store whose key is refused is AuthenticationFailed.
func TestGCPSecretManagerSync(t *testing.T) {
	srv, _ := gcptest.Start(t)
	tokens := srv.StartTokenEndpoint(t)
	srv.Add("projects/p/secrets/db", []byte(`{"user":"app","password":"s3cr3t-value"}`), map[string]string{"env": "prod"})
	srv.Add("projects/p/secrets/api-key", []byte("k-1"), map[string]string{"env": "prod"})
	srv.Add("projects/p/secrets/other", []byte("x"), map[string]string{"env": "dev"})

	ns := env.Namespace(t, "gcp", nil)
	runEsoForGCP(t, ns, nil)
	revokedKey := tokens.Key(t, "revoked@p.iam.gserviceaccount.com")
	tokens.Revoke("revoked@p.iam.gserviceaccount.com")
	good := secretStore(ns, "good", storeSpec("GCPSecretManager", "good", ""))
	refused := secretStore(ns, "refused", storeSpec("GCPSecretManager", "refused", ""))
	create(t,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "good-key"},
			Data: map[string][]byte{"key.json": tokens.Key(t, "eso@p.iam.gserviceaccount.com")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "revoked-key"}, Data: map[string][]byte{"key.json": revokedKey}},
		gcpKeyConfig(ns, "good", srv.Addr, "good-key"), gcpKeyConfig(ns, "refused", srv.Addr, "revoked-key"),
		good, refused,
	)
	msg := waitReady(t, refused, metav1.ConditionFalse, ssv2.ReasonAuthenticationFailed)
	if !strings.Contains(msg, "account not found") || strings.Contains(msg, "PRIVATE KEY") {
		t.Fatalf("refused store's condition: %s", msg)
	}
	waitReady(t, good, metav1.ConditionTrue, ssv2.ReasonValid)

	es := externalSecret(ns, "app", "SecretStore", "good", map[string]esv1.ExternalSecretDataRemoteRef{"pw": ref("db", "password")})
	es.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{
		{Extract: &esv1.ExternalSecretDataRemoteRef{Key: "db"}},
		{Find: &esv1.ExternalSecretFind{Tags: map[string]string{"env": "prod"}, Name: &esv1.FindName{RegExp: "^api"}}},
	}
	create(t, es)
	synced := waitSecretData(t, ns, "app", map[string]string{"pw": "s3cr3t-value", "user": "app", "password": "s3cr3t-value", "api-key": "k-1"})

	for _, code := range []codes.Code{codes.Unavailable, codes.ResourceExhausted} {
		t.Run(code.String(), func(t *testing.T) {
			srv.FailNext(1<<30, code)
			annotate(t, es, "force-sync", code.String())
			msg := waitReady(t, es, metav1.ConditionFalse, esv1.ReasonSecretSyncedError)
			if !strings.Contains(msg, code.String()) || strings.Contains(msg, "s3cr3t-value") {
				t.Fatalf("condition during the outage: %s", msg)
			}
			requireUnchanged(t, synced)
			srv.FailNext(0, codes.OK)
			waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)
		})
	}
	if n := tokens.Issued(); n != 1 {
		t.Errorf("%d tokens issued to eso, want one, reused by every sync", n)
	}
}

// TestGCPWorkloadIdentity: eso requests a token of a ServiceAccount of the
// store's namespace from the real API server, exchanges it at STS and
// impersonates the Google service account the ServiceAccount's annotation
// names; Secret Manager sees that account's token.
func TestGCPWorkloadIdentity(t *testing.T) {
	srv, _ := gcptest.Start(t)
	wi := srv.StartWorkloadIdentity(t)
	srv.Add("projects/p/secrets/db", []byte(`{"password":"from-workload-identity"}`), nil)
	ns := env.Namespace(t, "gcp-wi", nil)
	runEsoForGCP(t, ns, wi)
	store := secretStore(ns, "gcp", storeSpec("GCPSecretManager", "gcp", ""))
	create(t,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader",
			Annotations: map[string]string{gcpauth.GCPServiceAccountAnnotation: "reader@p.iam.gserviceaccount.com"}}},
		&provv1.GCPSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gcp"}, Spec: provv1.GCPSecretManagerSpec{
			ProjectID: "p", Endpoint: srv.Addr,
			Auth: &provv1.GCPAuth{WorkloadIdentity: &provv1.GCPWorkloadIdentity{
				ServiceAccountRef: provv1.KubernetesServiceAccount{Name: "reader"},
				ClusterLocation:   "europe-west1", ClusterName: "edge",
			}},
		}},
		store,
	)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
	create(t, externalSecret(ns, "app", "SecretStore", "gcp", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "password")}))
	waitSecretData(t, ns, "app", map[string]string{"password": "from-workload-identity"})

	ex := wi.Exchanges()
	if len(ex) != 1 {
		t.Fatalf("%d exchanges, want 1", len(ex))
	}
	// The subject token is a real TokenRequest token: a JWT of three parts.
	if parts := strings.Split(ex[0].Get("subject_token"), "."); len(parts) != 3 {
		t.Errorf("subject token is not a JWT")
	}
	if got := wi.Impersonations(); len(got) != 1 || got[0] != "reader@p.iam.gserviceaccount.com" {
		t.Errorf("impersonated %v", got)
	}
	auths := srv.Authorizations()
	if len(auths) == 0 || auths[len(auths)-1] != "Bearer gsa-2" {
		t.Errorf("Secret Manager saw %v, want the impersonated account's token", auths)
	}
}
