package conformance

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eso-dev/eso/app/grpcclient"
	"github.com/eso-dev/eso/providers/plugin"
)

// Environment of path (c), a provider process running elsewhere. README.md
// says what each means and which keys the backend must hold.
const (
	envAddress   = "ESO_CONFORMANCE_ADDRESS"
	envKind      = "ESO_CONFORMANCE_KIND"
	envName      = "ESO_CONFORMANCE_NAME"
	envNamespace = "ESO_CONFORMANCE_NAMESPACE"
	envScope     = "ESO_CONFORMANCE_CREDENTIALS_NAMESPACE"
	envCertDir   = "ESO_CONFORMANCE_CERT_DIR"
	envInsecure  = "ESO_CONFORMANCE_INSECURE"
	envKeyPrefix = "ESO_CONFORMANCE_KEY_PREFIX"
	envWrites    = "ESO_CONFORMANCE_WRITES"
)

// TestRunningProvider runs the suite against a provider process someone
// started (eso --mode=provider or any server of the protocol), reached the
// way core reaches it. The backend is seeded beforehand: the suite cannot
// write there as someone other than eso.
func TestRunningProvider(t *testing.T) {
	address := os.Getenv(envAddress)
	if address == "" {
		t.Skipf("%s is not set: no running provider process to test (see tests/conformance/README.md)", envAddress)
	}
	ref := plugin.Ref{Kind: required(t, envKind), Name: required(t, envName), Namespace: required(t, envNamespace)}
	scope := plugin.Scope{Namespace: ref.Namespace}
	if ns := os.Getenv(envScope); ns != "" {
		scope.Namespace = ns
	}

	var clientCert *corev1.Secret
	if os.Getenv(envInsecure) != "true" {
		clientCert = clientCertificate(t, required(t, envCertDir), "eso", "core-tls")
	}
	prefix := os.Getenv(envKeyPrefix)
	Run(t, Subject{
		Provider: Remote(t, address, ref.Kind, clientCert),
		Ref:      ref,
		Scope:    scope,
		Key:      func(k string) string { return prefix + k },
		Writes:   os.Getenv(envWrites) == "true",
		// Fake stores a property push as is, as upstream's Fake does.
		PropertyIgnored: ref.Kind == "Fake",
	})
}

func required(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is set, so %s is required too (see tests/conformance/README.md)", envAddress, name)
	}
	return v
}

// clientCertificate is core's client certificate Secret built from dir's
// tls.crt, tls.key and ca.crt (a mounted cert-manager Secret has this layout).
func clientCertificate(t *testing.T, dir, namespace, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Type: corev1.SecretTypeTLS, Data: map[string][]byte{}}
	for _, key := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey, grpcclient.KeyCA} {
		b, err := os.ReadFile(filepath.Join(dir, key))
		if err != nil {
			t.Fatalf("%s: %v", envCertDir, err)
		}
		s.Data[key] = b
	}
	return s
}
