package secretmanager

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/api/option"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/gcp/gcpauth"
	"github.com/eso-dev/eso/providers/gcp/gcptest"
	"github.com/eso-dev/eso/providers/plugin"
)

// No Secret Manager emulator exists: these tests run the real
// cloud.google.com/go/secretmanager client against gcptest, an in-process
// gRPC server implementing the Secret Manager API.

func newClient(t *testing.T) (*gcptest.Server, plugin.SecretsClient) {
	t.Helper()
	srv, opts := gcptest.Start(t)
	p := newProvider(t, provv1.GCPSecretManagerSpec{ProjectID: "p"}, opts)
	return srv, connect(t, p)
}

// newProvider serves one GCPSecretManager configuration, team/gcp, with
// spec; objs are further objects of the cluster (Secrets, ServiceAccounts).
func newProvider(t *testing.T, spec provv1.GCPSecretManagerSpec, opts []option.ClientOption, objs ...client.Object) plugin.Provider {
	t.Helper()
	return newProviderWith(t, fake.NewClientBuilder(), gcpauth.GoogleEndpoints, spec, opts, objs...)
}

// newProviderWith is newProvider with a client builder of the test's and
// Google's token services at endpoints.
func newProviderWith(t *testing.T, b *fake.ClientBuilder, endpoints gcpauth.Endpoints, spec provv1.GCPSecretManagerSpec, opts []option.ClientOption, objs ...client.Object) plugin.Provider {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = provv1.AddToScheme(scheme)
	cfg := &provv1.GCPSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "gcp"}, Spec: spec}
	c := b.WithScheme(scheme).WithObjects(append(objs, cfg)...).Build()
	return Definition(endpoints, opts...).Registration().NewProvider(plugin.Deps{Client: c, APIReader: c})
}

func connect(t *testing.T, p plugin.Provider) plugin.SecretsClient {
	t.Helper()
	cl, err := p.NewClient(context.Background(), plugin.Ref{Kind: Kind, Namespace: "team", Name: "gcp"}, plugin.Scope{Namespace: "team"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close(context.Background()) })
	return cl
}

func TestRead(t *testing.T) {
	ctx := context.Background()
	srv, c := newClient(t)
	srv.Add("projects/p/secrets/db", []byte(`{"user":"app","password":"pw-1"}`), map[string]string{"team": "payments"})
	srv.Add("projects/p/secrets/db", []byte(`{"user":"app","password":"pw-2","tls":{"mode":"on"}}`), nil)
	srv.Add("projects/p/secrets/api-key", []byte("k-1"), map[string]string{"env": "prod"})
	srv.Add("projects/p/secrets/web-key", []byte("k-2"), map[string]string{"env": "prod"})
	srv.Add("projects/other/secrets/api-key", []byte("elsewhere"), map[string]string{"env": "prod"})

	for _, tc := range []struct {
		ref  esv1.ExternalSecretDataRemoteRef
		want string
	}{
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "password"}, "pw-2"},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "password", Version: "1"}, "pw-1"},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "tls.mode"}, "on"},
		{esv1.ExternalSecretDataRemoteRef{Key: "api-key"}, "k-1"},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "team", MetadataPolicy: esv1.MetadataPolicyFetch}, "payments"},
	} {
		got, err := c.GetSecret(ctx, tc.ref)
		if err != nil || string(got) != tc.want {
			t.Errorf("GetSecret(%+v) = %q, %v; want %q", tc.ref, got, err, tc.want)
		}
	}
	for _, r := range []esv1.ExternalSecretDataRemoteRef{{Key: "nope"}, {Key: "db", Version: "9"}} {
		if _, err := c.GetSecret(ctx, r); !errors.Is(err, plugin.ErrSecretNotFound) {
			t.Errorf("GetSecret(%+v): %v, want ErrSecretNotFound", r, err)
		}
	}
	m, err := c.GetSecretMap(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"})
	if err != nil || string(m["password"]) != "pw-2" || len(m) != 3 {
		t.Errorf("GetSecretMap = %q, %v", m, err)
	}
	found, err := c.GetAllSecrets(ctx, esv1.ExternalSecretFind{Tags: map[string]string{"env": "prod"}, Name: &esv1.FindName{RegExp: "^api"}})
	if err != nil || len(found) != 1 || string(found["api-key"]) != "k-1" {
		t.Errorf("GetAllSecrets = %q, %v (other projects must not appear)", found, err)
	}
	path := "x/"
	if _, err := c.GetAllSecrets(ctx, esv1.ExternalSecretFind{Path: &path}); !errors.Is(err, plugin.ErrNotSupported) {
		t.Errorf("find.path: %v", err)
	}
}
