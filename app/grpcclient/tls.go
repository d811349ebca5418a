package grpcclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"

	"github.com/eso-dev/eso/providers/plugin"
)

// KeyCA is the Secret key of the CA bundle server certificates are checked
// against, as cert-manager writes it.
const KeyCA = "ca.crt"

// tlsConfig is core's side of mTLS to the provider at address: the client
// certificate from secret, the server's certificate checked against the
// secret's ca.crt for the address's host. Errors name the Secret and key,
// never what they hold.
func tlsConfig(secret *corev1.Secret, address string) (*tls.Config, error) {
	name := secret.Namespace + "/" + secret.Name
	cert, err := tls.X509KeyPair(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, fmt.Errorf("%w: client certificate Secret %s: %s and %s are not a PEM certificate and its key", plugin.ErrInvalidConfig, name, corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secret.Data[KeyCA]) {
		return nil, fmt.Errorf("%w: client certificate Secret %s has no PEM CA certificate in %s to check the provider's certificate with", plugin.ErrInvalidConfig, name, KeyCA)
	}
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		RootCAs:      roots,
		ServerName:   host,
	}, nil
}
