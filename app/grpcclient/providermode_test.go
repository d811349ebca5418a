package grpcclient

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/grpcclient/grpcclienttest"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/generators/password"
	fakeprovider "github.com/eso-dev/eso/providers/fake"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/sdk/server"
)

// TestAgainstProviderModeServer runs the adapter against eso's own provider
// mode serving the Fake provider and the Password generator over mTLS.
func TestAgainstProviderModeServer(t *testing.T) {
	catalog, err := plugin.NewIndex([]plugin.Registration{fakeprovider.Registration, password.Registration})
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := manager.NewScheme(catalog, manager.SchemeAdders{})
	if err != nil {
		t.Fatal(err)
	}
	serverCA, clientCA := grpcclienttest.NewCA(t, "server-ca"), grpcclienttest.NewCA(t, "client-ca")
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&provv1.Fake{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "team", UID: "u1", Generation: 1},
			Spec: provv1.FakeSpec{Data: []provv1.FakeSecret{{Key: "db", Value: `{"user":"admin","password":"s3cret"}`}}}},
		&genv1.Password{ObjectMeta: metav1.ObjectMeta{Name: "pw", Namespace: "team"}, Spec: genv1.PasswordSpec{Length: 24}},
		grpcclienttest.ClientSecret(t, "team", "core-tls", "eso-core", clientCA, serverCA),
	).Build()
	deps := plugin.Deps{Client: kube, APIReader: kube}
	srv, err := server.New(server.Options{Plugins: plugin.NewPlugins(catalog, deps),
		ConfigReader: kube, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := server.NewEndpoint(lis, srv, server.ServeOptions{TLS: grpcclienttest.ServerTLS(t, serverCA, clientCA), Log: logr.Discard()})
	go func() { _ = endpoint.Serve() }()
	t.Cleanup(func() { endpoint.Shutdown(context.Background()) })

	remote := New(kube, Options{})
	t.Cleanup(remote.Close)
	ep, err := remote.Endpoint(lis.Addr().String(), &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: "core-tls"}}, "team", "team")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	prov := remote.Provider(ep, "Fake")
	if err := prov.Validate(ctx, fakeRef, teamScope); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	cl, err := prov.NewClient(ctx, fakeRef, teamScope)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	defer func() { _ = cl.Close(ctx) }()
	if v, err := cl.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "password"}); err != nil || string(v) != "s3cret" {
		t.Errorf("GetSecret = %q, %v", v, err)
	}
	if _, err := cl.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "missing"}); !errors.Is(err, plugin.ErrSecretNotFound) {
		t.Errorf("a missing secret arrived as %v", err)
	}
	if _, ok := cl.(plugin.JSONProperties); !ok {
		t.Error("the Fake provider's properties are JSON paths, but the remote client does not say so")
	}
	if err := cl.(plugin.AuthChecker).CheckAuth(ctx); err != nil {
		t.Errorf("CheckAuth: %v", err)
	}
	missingConfig := plugin.Ref{Kind: "Fake", Name: "nope", Namespace: "team"}
	if err := prov.Validate(ctx, missingConfig, teamScope); !errors.Is(err, plugin.ErrConfigNotFound) {
		t.Errorf("a missing configuration arrived as %v", err)
	}

	gen := remote.Generator(ep, "Password")
	data, _, err := gen.Generate(ctx, plugin.Ref{Kind: "Password", Name: "pw", Namespace: "team"}, teamScope)
	if err != nil || len(data["password"]) != 24 {
		t.Errorf("Generate = %d bytes, %v", len(data["password"]), err)
	}
	if err := remote.Provider(ep, "Vault").Validate(ctx, plugin.Ref{Kind: "Vault", Name: "v", Namespace: "team"}, teamScope); !errors.Is(err, ErrKindNotServed) {
		t.Errorf("a kind the server does not serve: %v", err)
	}
}
