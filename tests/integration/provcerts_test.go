package integration

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/sdk/server"
)

// TestCoreIssuedProviderCertificates: eso core started with
// --provider-certificates-namespace issues a CA and the provider process's
// server and client certificates into Secrets; a provider process serving
// with the server Secret's files and a store presenting the client Secret
// talk mTLS, and an ExternalSecret syncs through it.
func TestCoreIssuedProviderCertificates(t *testing.T) {
	ns := env.Namespace(t, "provcerts", nil)
	cfg := testConfig()
	cfg.ProviderCertsNamespace, cfg.ProviderCertsDNSNames = ns, []string{"localhost"}
	runEso(t, cfg)

	serverSecret := waitSecret(t, ns, "eso-provider-server-tls")
	waitSecret(t, ns, "eso-provider-client-tls")
	dir := t.TempDir()
	files := server.TLSFiles{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"), ClientCAFile: filepath.Join(dir, "ca.crt")}
	for path, key := range map[string]string{files.CertFile: corev1.TLSCertKey, files.KeyFile: corev1.TLSPrivateKeyKey, files.ClientCAFile: "ca.crt"} {
		if err := os.WriteFile(path, serverSecret.Data[key], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	address := serveFakeProvider(t, files)

	store := secretStore(ns, "remote", storeSpec("Fake", "demo", ""))
	store.Spec.ProviderConfig.Address = address
	store.Spec.ProviderConfig.Auth = &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: "eso-provider-client-tls"}}
	create(t, fakeConfig(ns, "demo", map[string]string{"db": `{"password":"from-the-provider-process"}`}), store)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
	create(t, externalSecret(ns, "app", "SecretStore", "remote", map[string]esv1.ExternalSecretDataRemoteRef{"pw": ref("db", "password")}))
	waitSecretData(t, ns, "app", map[string]string{"pw": "from-the-provider-process"})
}

// waitSecret waits until Secret ns/name exists.
func waitSecret(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	eventually(t, "Secret "+ns+"/"+name, func() error {
		return env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s)
	})
	return &s
}

// serveFakeProvider runs a provider process (eso's gRPC server with the Fake
// provider, reading configurations from the test's API server) with TLS from
// files, and returns its address under the name "localhost".
func serveFakeProvider(t *testing.T, files server.TLSFiles) string {
	t.Helper()
	srv := providerProcess(t)
	tlsConfig, err := server.NewServerTLSConfig(files, time.Second, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := server.NewEndpoint(lis, srv, server.ServeOptions{TLS: tlsConfig, Log: logr.Discard()})
	go func() { _ = endpoint.Serve() }()
	t.Cleanup(func() { endpoint.Shutdown(context.Background()) })
	_, port, _ := net.SplitHostPort(lis.Addr().String())
	return net.JoinHostPort("localhost", port)
}
