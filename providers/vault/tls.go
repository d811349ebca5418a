package vault

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"sync/atomic"

	vault "github.com/hashicorp/vault/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// trustedCA returns the PEM bundle to trust for Vault's certificate
// (kit.TrustedCA), or nil for the system roots.
func trustedCA(ctx context.Context, r client.Reader, spec *provv1.VaultSpec, namespace string) ([]byte, error) {
	return kit.TrustedCA(ctx, r, spec.CABundle, spec.CAProvider, namespace)
}

// configureTLS makes cfg trust caPEM (if set) and present the client
// certificate clientCert holds, whenever the server asks for one.
func configureTLS(cfg *vault.Config, caPEM []byte, clientCert *clientCertificate) error {
	if len(caPEM) > 0 {
		if err := cfg.ConfigureTLS(&vault.TLSConfig{CACertBytes: caPEM}); err != nil {
			return fmt.Errorf("%w: CA bundle: %v", plugin.ErrInvalidConfig, err)
		}
	}
	if clientCert == nil {
		return nil
	}
	transport, ok := cfg.HttpClient.Transport.(*http.Transport)
	if !ok || transport.TLSClientConfig == nil {
		return fmt.Errorf("unexpected Vault client transport %T", cfg.HttpClient.Transport)
	}
	// Presented whatever CAs the server lists as acceptable: the cert auth
	// method trusts CAs of its own, not those of the listener.
	transport.TLSClientConfig.GetClientCertificate = clientCert.get
	return nil
}

// clientCertificate is the certificate presented to Vault, replaced at each
// login so that a certificate rotated in its Secret is picked up.
type clientCertificate struct {
	current atomic.Pointer[tls.Certificate]
}

func (c *clientCertificate) get(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	if cert := c.current.Load(); cert != nil {
		return cert, nil
	}
	return &tls.Certificate{}, nil // none yet: send no certificate
}

// readKeyPair reads the PEM certificate and private key cert auth names
// from Secrets of namespace.
func readKeyPair(ctx context.Context, r client.Reader, namespace string, a *provv1.VaultCertAuth) (*tls.Certificate, error) {
	pair, err := kit.ReadKeyPair(ctx, r, namespace, a.ClientCert, a.SecretRef)
	if err != nil {
		return nil, fmt.Errorf("cert auth: %w", err)
	}
	return &pair.Certificate, nil
}
