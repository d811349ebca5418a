package server

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"

	"github.com/eso-dev/eso/app/grpcclient/grpcclienttest"
)

// testCA is a certificate authority made for one test: grpcclienttest's CA
// under the names these tests use.
type testCA struct {
	*grpcclienttest.CA
	certPEM []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	ca := grpcclienttest.NewCA(t, name)
	return &testCA{CA: ca, certPEM: ca.PEM}
}

// issue returns a leaf certificate and key in PEM: a server certificate for
// localhost and 127.0.0.1, or a client certificate.
func (ca *testCA) issue(t *testing.T, name string, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	return ca.Issue(t, name, server)
}

// clientTLS is the configuration of a client presenting a certificate from
// clientCA (none if nil) and trusting the server certificates of serverCAs.
func clientTLS(t *testing.T, clientCA *testCA, serverCAs ...*testCA) *tls.Config {
	t.Helper()
	roots := make([]*grpcclienttest.CA, 0, len(serverCAs))
	for _, ca := range serverCAs {
		roots = append(roots, ca.CA)
	}
	cfg := &tls.Config{RootCAs: grpcclienttest.Pool(roots...), ServerName: "localhost", MinVersion: tls.VersionTLS12}
	if clientCA != nil {
		certPEM, keyPEM := clientCA.issue(t, "eso-core", false)
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		// Present the certificate whatever CAs the server asks for, so
		// the server's verification, not the client's choice, is tested.
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	}
	return cfg
}

// serverFiles writes a server certificate from serverCA and a client CA
// bundle to dir and returns their paths.
func serverFiles(t *testing.T, dir string, serverCA, clientCA *testCA) TLSFiles {
	t.Helper()
	files := TLSFiles{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"), ClientCAFile: filepath.Join(dir, "ca.crt")}
	certPEM, keyPEM := serverCA.issue(t, "eso-provider", true)
	writeFile(t, files.CertFile, certPEM)
	writeFile(t, files.KeyFile, keyPEM)
	writeFile(t, files.ClientCAFile, clientCA.certPEM)
	return files
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	// Write and rename, as a Secret volume update swaps files atomically.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
