package conformance

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/grpcclient"
	"github.com/eso-dev/eso/providers/plugin"
)

// Remote is the provider of kind served by the provider process at
// address, reached exactly as core reaches it: over mTLS with clientCert,
// a kubernetes.io/tls Secret holding tls.crt, tls.key and ca.crt (the CA of
// the server's certificate), or over plaintext when clientCert is nil (a
// process serving insecurely). A Subject with it runs the suite against
// any provider process, eso's or one written with the sdk package.
func Remote(t testing.TB, address, kind string, clientCert *corev1.Secret) plugin.Provider {
	t.Helper()
	certs := ctrlfake.NewClientBuilder()
	var auth *ssv2.ProviderAuth
	namespace := "conformance"
	if clientCert != nil {
		namespace = clientCert.Namespace
		certs = certs.WithObjects(clientCert)
		auth = &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: clientCert.Name}}
	}
	remote := grpcclient.New(certs.Build(), grpcclient.Options{Insecure: clientCert == nil})
	t.Cleanup(remote.Close)
	ep, err := remote.Endpoint(address, auth, namespace, namespace)
	if err != nil {
		t.Fatal(err)
	}
	return remote.Provider(ep, kind)
}
