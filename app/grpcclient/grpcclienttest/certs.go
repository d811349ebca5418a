package grpcclienttest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"testing"
	"time"

	"google.golang.org/grpc/credentials"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eso-dev/eso/providers/plugin/wire"
)

// CA is a certificate authority made for one test.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate.
	PEM []byte
}

func nextSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}

// NewCA makes a CA named name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	der, key := sign(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: name},
		// A day either side, so it is current for leaves with any window
		// IssueBetween is given, expired ones included.
		NotBefore:             time.Now().Add(-24 * time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}, nil)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// sign makes a key and a certificate of tmpl for it, signed by issuer (nil:
// self-signed) and numbered by nextSerial.
func sign(t testing.TB, tmpl *x509.Certificate, issuer *CA) (der []byte, key *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = nextSerial()
	parent, signer := tmpl, key
	if issuer != nil {
		parent, signer = issuer.cert, issuer.key
	}
	if der, err = x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer); err != nil {
		t.Fatal(err)
	}
	return der, key
}

// Pool is a certificate pool of the certificates of cas.
func Pool(cas ...*CA) *x509.CertPool {
	pool := x509.NewCertPool()
	for _, ca := range cas {
		pool.AddCert(ca.cert)
	}
	return pool
}

// Issue signs a leaf for cn, current for the next hour: a server
// certificate for localhost and 127.0.0.1, or a client certificate. It
// returns the certificate and key PEM.
func (ca *CA) Issue(t testing.TB, cn string, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	return ca.IssueBetween(t, cn, server, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
}

// IssueBetween is Issue with a leaf valid from notBefore to notAfter, which
// may both be past, for an expired certificate. A client certificate carries
// eso-core's identity.
func (ca *CA) IssueBetween(t testing.TB, cn string, server bool, notBefore, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	var uris []*url.URL
	if !server {
		uris = []*url.URL{wire.CoreURI()}
	}
	return ca.issue(t, cn, server, notBefore, notAfter, uris)
}

// IssueForNamespaces signs a client certificate that may act in namespaces
// only (none: a certificate with no identity at all).
func (ca *CA) IssueForNamespaces(t testing.TB, cn string, namespaces ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	uris := []*url.URL{}
	for _, ns := range namespaces {
		uris = append(uris, wire.NamespaceURI(ns))
	}
	return ca.issue(t, cn, false, time.Now().Add(-time.Minute), time.Now().Add(time.Hour), uris)
}

func (ca *CA) issue(t testing.TB, cn string, server bool, notBefore, notAfter time.Time, uris []*url.URL) (certPEM, keyPEM []byte) {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		URIs:        uris,
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, key := sign(t, tmpl, ca)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// ServerCredentials is mTLS for a server whose certificate serverCA signs
// and which accepts only client certificates clientCA signs.
func ServerCredentials(t testing.TB, serverCA, clientCA *CA) credentials.TransportCredentials {
	t.Helper()
	return credentials.NewTLS(ServerTLS(t, serverCA, clientCA))
}

// ServerTLS is ServerCredentials' TLS configuration.
func ServerTLS(t testing.TB, serverCA, clientCA *CA) *tls.Config {
	t.Helper()
	certPEM, keyPEM := serverCA.Issue(t, "eso-provider", true)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientCAs:    Pool(clientCA),
		ClientAuth:   tls.RequireAndVerifyClientCert,
	}
}

// ClientSecret is core's client certificate as cert-manager writes it: a
// certificate for cn clientCA signs, and serverCA as ca.crt.
func ClientSecret(t testing.TB, namespace, name, cn string, clientCA, serverCA *CA) *corev1.Secret {
	t.Helper()
	certPEM, keyPEM := clientCA.Issue(t, cn, false)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       certPEM,
			corev1.TLSPrivateKeyKey: keyPEM,
			"ca.crt":                serverCA.PEM,
		},
	}
}
