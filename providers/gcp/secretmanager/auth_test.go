package secretmanager

import (
	"context"
	"errors"
	"strings"
	"testing"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/gcp/gcpauth"
	"github.com/eso-dev/eso/providers/gcp/gcptest"
	"github.com/eso-dev/eso/providers/plugin"
)

func keySpec() provv1.GCPSecretManagerSpec {
	return provv1.GCPSecretManagerSpec{ProjectID: "p", Auth: &provv1.GCPAuth{SecretRef: &provv1.GCPAuthSecretRef{
		SecretAccessKey: provv1.SecretKeySelector{Name: "gcp-key", Key: "key.json"}}}}
}

func keySecret(key []byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "gcp-key"}, Data: map[string][]byte{"key.json": key}}
}

// TestServiceAccountKey: the key's signed assertion is exchanged once for an
// access token, which every call carries; CheckAuth uses the same token.
func TestServiceAccountKey(t *testing.T) {
	ctx := context.Background()
	srv, _ := gcptest.Start(t)
	tokens := srv.StartTokenEndpoint(t)
	srv.Add("projects/p/secrets/db", []byte("pw"), nil)
	c := connect(t, newProvider(t, keySpec(), srv.Transport(), keySecret(tokens.Key(t, "eso@p.iam.gserviceaccount.com"))))

	if err := c.(plugin.AuthChecker).CheckAuth(ctx); err != nil {
		t.Fatalf("CheckAuth: %v", err)
	}
	for range 3 {
		if v, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"}); err != nil || string(v) != "pw" {
			t.Fatalf("GetSecret = %q, %v", v, err)
		}
	}
	if n := tokens.Issued(); n != 1 {
		t.Errorf("%d tokens issued for a check and three reads, want 1", n)
	}
	for _, a := range srv.Authorizations() {
		if !strings.HasPrefix(a, "Bearer ya29.test-1-eso@") {
			t.Errorf("call authorized with %q", a)
		}
	}
}

// TestRefusedKey: a revoked key shows in CheckAuth and in reads as
// ErrAuthFailed, with Google's description and without the key.
func TestRefusedKey(t *testing.T) {
	ctx := context.Background()
	srv, _ := gcptest.Start(t)
	tokens := srv.StartTokenEndpoint(t)
	srv.Add("projects/p/secrets/db", []byte("pw"), nil)
	key := tokens.Key(t, "revoked@p.iam.gserviceaccount.com")
	tokens.Revoke("revoked@p.iam.gserviceaccount.com")
	c := connect(t, newProvider(t, keySpec(), srv.Transport(), keySecret(key)))

	err := c.(plugin.AuthChecker).CheckAuth(ctx)
	if !errors.Is(err, plugin.ErrAuthFailed) || !strings.Contains(err.Error(), "account not found") {
		t.Errorf("CheckAuth with a revoked key: %v", err)
	}
	_, err = c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"})
	if !errors.Is(err, plugin.ErrAuthFailed) || !strings.Contains(err.Error(), `"db"`) {
		t.Errorf("GetSecret with a revoked key: %v", err)
	}
	if n := srv.CallCount("AccessSecretVersion"); n != 0 {
		t.Errorf("%d calls reached Secret Manager without a token", n)
	}
	assertNoLeak(t, err, "BEGIN PRIVATE KEY", "pw")

	// Not a key at all: an invalid configuration, the content not quoted.
	p := newProvider(t, keySpec(), srv.Transport(), keySecret([]byte(`{"type":"authorized_user","secret":"s3cr3t"}`)))
	err = p.Validate(ctx, plugin.Ref{Kind: Kind, Namespace: "team", Name: "gcp"}, plugin.Scope{Namespace: "team"})
	if !errors.Is(err, plugin.ErrInvalidConfig) {
		t.Errorf("Validate with a non-key: %v", err)
	}
	assertNoLeak(t, err, "s3cr3t")
}

// TestTokenRefusedByTheServer: a token Secret Manager does not accept
// (revoked after it was issued) is ErrAuthFailed, a missing permission
// ErrOutOfScope.
func TestTokenRefusedByTheServer(t *testing.T) {
	ctx := context.Background()
	srv, _ := gcptest.Start(t)
	tokens := srv.StartTokenEndpoint(t)
	srv.Add("projects/p/secrets/db", []byte("pw"), nil)
	c := connect(t, newProvider(t, keySpec(), srv.Transport(), keySecret(tokens.Key(t, "eso@p.iam.gserviceaccount.com"))))
	if _, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"}); err != nil {
		t.Fatal(err)
	}
	srv.RevokeToken("ya29.test-1-eso@p.iam.gserviceaccount.com")
	if _, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"}); !errors.Is(err, plugin.ErrAuthFailed) {
		t.Errorf("read with a revoked token: %v", err)
	}
}

// TestWorkloadIdentity: a token of the ServiceAccount is exchanged at STS
// for the cluster's identity pool, then for a token of the Google service
// account the ServiceAccount's annotation names; Secret Manager sees that
// token, and refreshes reuse it.
func TestWorkloadIdentity(t *testing.T) {
	ctx := context.Background()
	srv, _ := gcptest.Start(t)
	wi := srv.StartWorkloadIdentity(t)
	srv.Add("projects/p/secrets/db", []byte("pw"), nil)
	var audiences [][]string
	requests := interceptor.Funcs{SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, _ ...client.SubResourceCreateOption) error {
		tr := subObj.(*authv1.TokenRequest)
		audiences = append(audiences, tr.Spec.Audiences)
		tr.Status.Token = "k8s-token-of-" + obj.GetNamespace() + "/" + obj.GetName()
		tr.Status.ExpirationTimestamp = metav1.Now()
		return nil
	}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "reader",
		Annotations: map[string]string{gcpauth.GCPServiceAccountAnnotation: "reader@p.iam.gserviceaccount.com"}}}
	spec := provv1.GCPSecretManagerSpec{ProjectID: "p", Auth: &provv1.GCPAuth{WorkloadIdentity: &provv1.GCPWorkloadIdentity{
		ServiceAccountRef: provv1.KubernetesServiceAccount{Name: "reader"},
		ClusterLocation:   "europe-west1", ClusterName: "edge", ClusterProjectID: "cluster-project",
	}}}
	p := newProviderWith(t, fake.NewClientBuilder().WithInterceptorFuncs(requests), gcpauth.Endpoints{STS: wi.STS, IAMCredentials: wi.IAMCredentials}, spec, srv.Transport(), sa)
	c := connect(t, p)

	if err := c.(plugin.AuthChecker).CheckAuth(ctx); err != nil {
		t.Fatalf("CheckAuth: %v", err)
	}
	for range 2 {
		if v, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"}); err != nil || string(v) != "pw" {
			t.Fatalf("GetSecret = %q, %v", v, err)
		}
	}
	ex := wi.Exchanges()
	if len(ex) != 1 || len(audiences) != 1 {
		t.Fatalf("%d exchanges, %d TokenRequests for a check and two reads, want 1", len(ex), len(audiences))
	}
	if got := audiences[0]; len(got) != 1 || got[0] != "cluster-project.svc.id.goog" {
		t.Errorf("ServiceAccount token audiences = %v", got)
	}
	wantAudience := "identitynamespace:cluster-project.svc.id.goog:https://container.googleapis.com/v1/projects/cluster-project/locations/europe-west1/clusters/edge"
	if ex[0].Get("audience") != wantAudience || ex[0].Get("subject_token") != "k8s-token-of-team/reader" || ex[0].Get("scope") != gcpauth.CloudPlatformScope {
		t.Errorf("STS request: %v", ex[0])
	}
	if got := wi.Impersonations(); len(got) != 1 || got[0] != "reader@p.iam.gserviceaccount.com" {
		t.Errorf("impersonated %v", got)
	}
	for _, a := range srv.Authorizations() {
		if a != "Bearer gsa-2" {
			t.Errorf("call authorized with %q, want the impersonated account's token", a)
		}
	}
}

// TestWorkloadIdentityFederatedAndRefused: without the annotation the
// federated token itself is used; a refused exchange or impersonation is
// ErrAuthFailed with Google's description.
func TestWorkloadIdentityFederatedAndRefused(t *testing.T) {
	ctx := context.Background()
	srv, _ := gcptest.Start(t)
	wi := srv.StartWorkloadIdentity(t)
	srv.Add("projects/p/secrets/db", []byte("pw"), nil)
	spec := func(sa string) provv1.GCPSecretManagerSpec {
		return provv1.GCPSecretManagerSpec{ProjectID: "p", Auth: &provv1.GCPAuth{WorkloadIdentity: &provv1.GCPWorkloadIdentity{
			ServiceAccountRef: provv1.KubernetesServiceAccount{Name: sa, Audiences: []string{"custom"}},
			ClusterLocation:   "europe-west1", ClusterName: "edge",
		}}}
	}
	wiClient := func(sa *corev1.ServiceAccount) plugin.SecretsClient {
		p := newProviderWith(t, fake.NewClientBuilder(), gcpauth.Endpoints{STS: wi.STS, IAMCredentials: wi.IAMCredentials}, spec(sa.Name), srv.Transport(), sa)
		return connect(t, p)
	}
	plain := wiClient(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "plain"}})
	if v, err := plain.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"}); err != nil || string(v) != "pw" {
		t.Fatalf("GetSecret with the federated token = %q, %v", v, err)
	}
	if ex := wi.Exchanges(); len(ex) != 1 || !strings.HasPrefix(ex[0].Get("audience"), "identitynamespace:p.svc.id.goog:") {
		t.Errorf("exchanges %v: the cluster project defaults to projectID", ex)
	}
	if got := srv.Authorizations(); got[len(got)-1] != "Bearer federated-1" || len(wi.Impersonations()) != 0 {
		t.Errorf("authorization %v, impersonations %v", got, wi.Impersonations())
	}

	wi.Deny("denied@p.iam.gserviceaccount.com")
	denied := wiClient(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "denied",
		Annotations: map[string]string{gcpauth.GCPServiceAccountAnnotation: "denied@p.iam.gserviceaccount.com"}}})
	if err := denied.(plugin.AuthChecker).CheckAuth(ctx); !errors.Is(err, plugin.ErrAuthFailed) || !strings.Contains(err.Error(), "iam.serviceAccounts.getAccessToken") {
		t.Errorf("CheckAuth with a refused impersonation: %v", err)
	}

	wi.RefuseExchanges("The audience in ID Token does not match the expected audience.")
	refused := wiClient(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "refused"}})
	if err := refused.(plugin.AuthChecker).CheckAuth(ctx); !errors.Is(err, plugin.ErrAuthFailed) || !strings.Contains(err.Error(), "audience") {
		t.Errorf("CheckAuth with a refused exchange: %v", err)
	}
	_, err := refused.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"})
	if !errors.Is(err, plugin.ErrAuthFailed) {
		t.Errorf("GetSecret with a refused exchange: %v", err)
	}
	assertNoLeak(t, err, "k8s-token", "pw")
}

func assertNoLeak(t *testing.T, err error, secrets ...string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q contains %q", err, s)
		}
	}
}
