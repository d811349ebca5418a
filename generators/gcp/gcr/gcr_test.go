package gcr

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/gcp/gcpauth"
	"github.com/eso-dev/eso/providers/gcp/gcptest"
	"github.com/eso-dev/eso/providers/plugin"
)

// These tests run against in-process Google token services (gcptest).

var (
	ref   = plugin.Ref{Kind: Kind, Namespace: "team", Name: "gcr"}
	scope = plugin.Scope{Namespace: "team"}
)

// newGenerator serves spec as GCRAccessToken team/gcr beside objects. The
// fake API answers TokenRequests with "k8s-token-of-<namespace>/<name>".
func newGenerator(t *testing.T, spec genv1.GCRAccessTokenSpec, objects ...client.Object) plugin.Generator {
	t.Helper()
	return newGeneratorWith(t, gcpauth.GoogleEndpoints, spec, objects...)
}

func newGeneratorWith(t *testing.T, endpoints gcpauth.Endpoints, spec genv1.GCRAccessTokenSpec, objects ...client.Object) plugin.Generator {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = genv1.AddToScheme(scheme)
	tokenRequests := interceptor.Funcs{SubResourceCreate: func(_ context.Context, _ client.Client, _ string, obj, sub client.Object, _ ...client.SubResourceCreateOption) error {
		tr := sub.(*authv1.TokenRequest)
		tr.Status.Token = "k8s-token-of-" + obj.GetNamespace() + "/" + obj.GetName()
		tr.Status.ExpirationTimestamp = metav1.NewTime(time.Now().Add(10 * time.Minute))
		return nil
	}}
	cfg := &genv1.GCRAccessToken{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "gcr"}, Spec: spec}
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(tokenRequests).WithObjects(append(objects, cfg)...).Build()
	return Definition(endpoints).Registration().NewGenerator(plugin.Deps{Client: c, APIReader: c})
}

func keyAuth(key string) *provv1.GCPAuth {
	return &provv1.GCPAuth{SecretRef: &provv1.GCPAuthSecretRef{SecretAccessKey: provv1.SecretKeySelector{Name: "gcp-key", Key: key}}}
}

func keySecret(key []byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "gcp-key"}, Data: map[string][]byte{"key.json": key}}
}

// TestServiceAccountKey: each generation is a fresh access token of the
// key's account; a revoked key is ErrAuthFailed with Google's description
// and without the key.
func TestServiceAccountKey(t *testing.T) {
	ctx := context.Background()
	srv, _ := gcptest.Start(t)
	tokens := srv.StartTokenEndpoint(t)
	key := tokens.Key(t, "puller@p.iam.gserviceaccount.com")
	g := newGenerator(t, genv1.GCRAccessTokenSpec{ProjectID: "p", Auth: keyAuth("key.json")}, keySecret(key))

	start := time.Now()
	for i := 1; i <= 2; i++ {
		values, state, err := g.Generate(ctx, ref, scope)
		if err != nil {
			t.Fatal(err)
		}
		if state != nil {
			t.Errorf("state %s: nothing to revoke", state)
		}
		if string(values["username"]) != "oauth2accesstoken" || string(values["password"]) != "ya29.test-"+strconv.Itoa(i)+"-puller@p.iam.gserviceaccount.com" {
			t.Errorf("generation %d: username %q, password %q", i, values["username"], values["password"])
		}
		expiry, err := strconv.ParseInt(string(values["expiry"]), 10, 64)
		if d := time.Unix(expiry, 0).Sub(start); err != nil || d < 50*time.Minute || d > time.Hour {
			t.Errorf("expiry = %q, want Unix seconds about an hour ahead", values["expiry"])
		}
	}

	tokens.Revoke("puller@p.iam.gserviceaccount.com")
	_, _, err := g.Generate(ctx, ref, scope)
	if !errors.Is(err, plugin.ErrAuthFailed) || !strings.Contains(err.Error(), "account not found") {
		t.Errorf("revoked key: %v", err)
	}
	if strings.Contains(err.Error(), "PRIVATE KEY") {
		t.Error("error quotes the key")
	}
}

// TestWorkloadIdentity: the ServiceAccount's token is exchanged at STS and
// then for a token of the Google service account its annotation names.
func TestWorkloadIdentity(t *testing.T) {
	ctx := context.Background()
	srv, _ := gcptest.Start(t)
	wi := srv.StartWorkloadIdentity(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "puller",
		Annotations: map[string]string{gcpauth.GCPServiceAccountAnnotation: "puller@p.iam.gserviceaccount.com"}}}
	g := newGeneratorWith(t, gcpauth.Endpoints{STS: wi.STS, IAMCredentials: wi.IAMCredentials}, genv1.GCRAccessTokenSpec{ProjectID: "p",
		Auth: &provv1.GCPAuth{WorkloadIdentity: &provv1.GCPWorkloadIdentity{
			ServiceAccountRef: provv1.KubernetesServiceAccount{Name: "puller"}, ClusterLocation: "europe-west1", ClusterName: "edge"}}}, sa)

	values, _, err := g.Generate(ctx, ref, scope)
	if err != nil {
		t.Fatal(err)
	}
	if string(values["password"]) != "gsa-2" {
		t.Errorf("password %q, want the impersonated account's token", values["password"])
	}
	if ex := wi.Exchanges(); len(ex) != 1 || ex[0].Get("subject_token") != "k8s-token-of-team/puller" {
		t.Errorf("exchanges %v", ex)
	}
	if got := wi.Impersonations(); len(got) != 1 || got[0] != "puller@p.iam.gserviceaccount.com" {
		t.Errorf("impersonated %v", got)
	}
}

// TestValidate resolves the configuration and its references and parses
// the key, without asking for a token.
func TestValidate(t *testing.T) {
	ctx := context.Background()
	srv, _ := gcptest.Start(t)
	tokens := srv.StartTokenEndpoint(t)
	key := keySecret(tokens.Key(t, "puller@p.iam.gserviceaccount.com"))
	if err := newGenerator(t, genv1.GCRAccessTokenSpec{ProjectID: "p", Auth: keyAuth("key.json")}, key).Validate(ctx, ref, scope); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if tokens.Issued() != 0 {
		t.Error("Validate asked for a token")
	}
	if err := newGenerator(t, genv1.GCRAccessTokenSpec{ProjectID: "p", Auth: keyAuth("other")}, key).Validate(ctx, ref, scope); !errors.Is(err, plugin.ErrInvalidConfig) || !strings.Contains(err.Error(), `"other"`) {
		t.Errorf("Validate without the key: %v", err)
	}
	notAKey := keySecret([]byte(`{"type":"authorized_user"}`))
	if err := newGenerator(t, genv1.GCRAccessTokenSpec{ProjectID: "p", Auth: keyAuth("key.json")}, notAKey).Validate(ctx, ref, scope); !errors.Is(err, plugin.ErrInvalidConfig) || !strings.Contains(err.Error(), "team/gcp-key") {
		t.Errorf("Validate with a key that is not a service account key: %v", err)
	}
	if err := newGenerator(t, genv1.GCRAccessTokenSpec{ProjectID: "p"}).Validate(ctx, ref, scope); !errors.Is(err, plugin.ErrNoAmbientCredentials) {
		t.Errorf("Validate without auth or ambient credentials: %v", err)
	}
	if err := newGenerator(t, genv1.GCRAccessTokenSpec{ProjectID: "p"}).Validate(ctx, plugin.Ref{Kind: Kind, Namespace: "team", Name: "missing"}, scope); !errors.Is(err, plugin.ErrConfigNotFound) {
		t.Errorf("Validate of a missing configuration: %v", err)
	}
}
