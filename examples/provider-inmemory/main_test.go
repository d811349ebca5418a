package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/eso-dev/eso/app/grpcclient/grpcclienttest"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/sdk"
	"github.com/eso-dev/eso/tests/conformance"
)

// TestConformance serves the provider over mTLS on loopback, as its process
// does, and runs eso's conformance suite against it the way core calls it.
// The configuration holds the keys the suite expects to find seeded.
func TestConformance(t *testing.T) {
	serverCA, clientCA := grpcclienttest.NewCA(t, "provider-ca"), grpcclienttest.NewCA(t, "core-ca")
	dir := t.TempDir()
	cert, key := serverCA.Issue(t, "127.0.0.1", true)
	files := map[string][]byte{"tls.crt": cert, "tls.key": key, "ca.crt": clientCA.PEM}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	cfg := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"secrets": map[string]any{
		"conf-db":      `{"user":"app","password":"s3cr3t"}`,
		"conf-find-a":  `{"v":"a"}`,
		"conf-find-b":  `{"v":"b"}`,
		"conf-foreign": `{"owner":"someone-else"}`,
	}}}}
	gvk := sdk.GroupVersion.WithKind(Provider.Kind)
	cfg.SetGroupVersionKind(gvk)
	cfg.SetNamespace("team")
	cfg.SetName("conformance")
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	scheme.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
	kube := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(cfg).Build()

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server, err := sdk.Listen(sdk.Options{
		Listener:    lis,
		TLSCertFile: filepath.Join(dir, "tls.crt"), TLSKeyFile: filepath.Join(dir, "tls.key"), TLSClientCAFile: filepath.Join(dir, "ca.crt"),
		Kubernetes: kube,
	}, Provider)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Stop(context.Background()) })

	clientCert := grpcclienttest.ClientSecret(t, "eso", "core-tls", "eso-core", clientCA, serverCA)
	conformance.Run(t, conformance.Subject{
		Provider: conformance.Remote(t, server.Addr().String(), Provider.Kind, clientCert),
		Ref:      plugin.Ref{Kind: Provider.Kind, Namespace: "team", Name: "conformance"},
		Scope:    plugin.Scope{Namespace: "team"},
		Writes:   true,
	})
}
