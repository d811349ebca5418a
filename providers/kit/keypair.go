package kit

import (
	"context"
	"crypto/tls"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// KeyPair is a TLS client certificate read from Secrets: the PEM as stored,
// for clients that take PEM, and the parsed pair.
type KeyPair struct {
	CertPEM, KeyPEM []byte
	Certificate     tls.Certificate
}

// ReadKeyPair reads a PEM certificate (chain) and its private key from
// Secrets of namespace, the request's credentials namespace, and checks
// they are a usable pair. Errors name the Secrets and keys, never their
// content: crypto/tls describes the problem ("private key does not match
// public key"), never the PEM data.
func ReadKeyPair(ctx context.Context, r client.Reader, namespace string, cert, key provv1.SecretKeySelector) (*KeyPair, error) {
	certPEM, err := CredentialValue(ctx, r, namespace, cert.Name, cert.Key)
	if err != nil {
		return nil, err
	}
	keyPEM, err := CredentialValue(ctx, r, namespace, key.Name, key.Key)
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%w: certificate %s/%s[%s] and private key %s/%s[%s] are not a usable PEM pair: %v",
			plugin.ErrInvalidConfig, namespace, cert.Name, cert.Key, namespace, key.Name, key.Key, err)
	}
	return &KeyPair{CertPEM: certPEM, KeyPEM: keyPEM, Certificate: pair}, nil
}
