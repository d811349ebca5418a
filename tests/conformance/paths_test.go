package conformance

import (
	"context"
	"net"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/grpcclient"
	"github.com/eso-dev/eso/app/grpcclient/grpcclienttest"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/sdk/server"
)

// backend is a provider with the backend behind it: the Subject that runs
// it in process, plus what a provider-mode server needs to serve the same
// provider (its registration, for the configuration kind, and the client
// its configuration objects are read with).
type backend struct {
	Subject
	registration plugin.Registration
	configs      client.Reader
}

// runEveryPath runs the suite on a fresh backend for each path that needs
// no outside process: in process (path a) and through eso's gRPC server and
// client on loopback over mTLS (path b). A provider process running
// elsewhere (path c) is TestRunningProvider.
func runEveryPath(t *testing.T, newBackend func(testing.TB) backend) {
	t.Run("in-process", func(t *testing.T) { Run(t, newBackend(t).Subject) })
	t.Run("grpc", func(t *testing.T) { Run(t, overGRPC(t, newBackend(t))) })
}

// overGRPC serves b's provider with eso's provider-mode server on a loopback
// port and returns the Subject whose Provider is core's remote adapter for
// it. Seeding still goes straight to the backend.
func overGRPC(t *testing.T, b backend) Subject {
	t.Helper()
	reg := b.registration
	reg.NewProvider = func(plugin.Deps) plugin.Provider { return b.Provider }
	remote, ep := serveLoopback(t, reg, b.configs)
	s := b.Subject
	s.Provider = remote.Provider(ep, reg.Kind)
	return s
}

// serveLoopback serves reg with eso's provider-mode server on a loopback
// port, reading configurations through configs, and returns core's remote
// adapter and the endpoint to reach it by, over mTLS as in a cluster.
func serveLoopback(t *testing.T, reg plugin.Registration, configs client.Reader) (*grpcclient.Remote, grpcclient.Endpoint) {
	t.Helper()
	catalog, err := plugin.NewIndex([]plugin.Registration{reg})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{
		Plugins:      plugin.NewPlugins(catalog, plugin.Deps{}),
		ConfigReader: configs,
		Log:          logr.Discard(),
	})
	if err != nil {
		t.Fatal(err)
	}
	serverCA, clientCA := grpcclienttest.NewCA(t, "provider-ca"), grpcclienttest.NewCA(t, "core-ca")
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := server.NewEndpoint(lis, srv, server.ServeOptions{TLS: grpcclienttest.ServerTLS(t, serverCA, clientCA), Log: logr.Discard()})
	go func() { _ = endpoint.Serve() }()
	t.Cleanup(func() { endpoint.Shutdown(context.Background()) })

	// Core reads its client certificate from a Secret, as in a cluster.
	const certNamespace = "eso"
	certs := ctrlfake.NewClientBuilder().WithObjects(
		grpcclienttest.ClientSecret(t, certNamespace, "core-tls", "eso-core", clientCA, serverCA)).Build()
	remote := grpcclient.New(certs, grpcclient.Options{})
	t.Cleanup(remote.Close)
	ep, err := remote.Endpoint(lis.Addr().String(), &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: "core-tls"}}, certNamespace, certNamespace)
	if err != nil {
		t.Fatal(err)
	}
	return remote, ep
}
