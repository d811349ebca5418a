package vault

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"sync/atomic"

	vault "github.com/hashicorp/vault/api"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// trustedCA returns the PEM bundle to trust for the server's certificate:
// caBundle, or what caProvider names in namespace, or nil for the system
// roots. ConfigMaps and unmanaged Secrets are not in eso's cache, so both
// are read with r, the API reader.
func trustedCA(ctx context.Context, r client.Reader, spec *provv1.VaultSpec, namespace string) ([]byte, error) {
	if len(spec.CABundle) > 0 && spec.CAProvider != nil {
		return nil, fmt.Errorf("%w: set caBundle or caProvider, not both", plugin.ErrInvalidConfig)
	}
	if spec.CAProvider == nil {
		return spec.CABundle, nil
	}
	p := spec.CAProvider
	switch p.Type {
	case provv1.CAProviderSecret:
		return kit.CredentialValue(ctx, r, namespace, p.Name, p.Key)
	case provv1.CAProviderConfigMap:
		var cm corev1.ConfigMap
		if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: p.Name}, &cm); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, plugin.Awaiting(plugin.ObjectRef{Kind: "ConfigMap", Namespace: namespace, Name: p.Name},
					fmt.Errorf("%w: caProvider ConfigMap %s/%s not found", plugin.ErrCredentialsNotFound, namespace, p.Name))
			}
			return nil, fmt.Errorf("reading caProvider ConfigMap %s/%s: %w", namespace, p.Name, err)
		}
		if v, ok := cm.Data[p.Key]; ok && v != "" {
			return []byte(v), nil
		}
		if v := cm.BinaryData[p.Key]; len(v) > 0 {
			return v, nil
		}
		return nil, plugin.Awaiting(plugin.ObjectRef{Kind: "ConfigMap", Namespace: namespace, Name: p.Name, ResourceVersion: cm.ResourceVersion},
			fmt.Errorf("%w: caProvider ConfigMap %s/%s has no key %q", plugin.ErrCredentialsNotFound, namespace, p.Name, p.Key))
	default:
		return nil, fmt.Errorf("%w: caProvider type %q (want Secret or ConfigMap)", plugin.ErrInvalidConfig, p.Type)
	}
}

// configureTLS makes cfg trust caPEM (if set) and present the client
// certificate clientCert holds, whenever the server asks for one.
func configureTLS(cfg *vault.Config, caPEM []byte, clientCert *clientCertificate) error {
	if len(caPEM) > 0 {
		if !x509.NewCertPool().AppendCertsFromPEM(caPEM) {
			return fmt.Errorf("%w: the CA bundle (caBundle or caProvider) holds no PEM certificate", plugin.ErrInvalidConfig)
		}
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

// readKeyPair reads the PEM certificate and private key cert auth names from
// Secrets of namespace. Errors name the Secrets and keys, never their content.
func readKeyPair(ctx context.Context, r client.Reader, namespace string, a *provv1.VaultCertAuth) (*tls.Certificate, error) {
	certPEM, err := kit.CredentialValue(ctx, r, namespace, a.ClientCert.Name, a.ClientCert.Key)
	if err != nil {
		return nil, err
	}
	keyPEM, err := kit.CredentialValue(ctx, r, namespace, a.SecretRef.Name, a.SecretRef.Key)
	if err != nil {
		return nil, err
	}
	// crypto/tls errors describe the problem ("private key does not match
	// public key"), never the PEM data.
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%w: cert auth: certificate %s/%s[%s] and private key %s/%s[%s] are not a usable PEM pair: %v",
			plugin.ErrInvalidConfig, namespace, a.ClientCert.Name, a.ClientCert.Key, namespace, a.SecretRef.Name, a.SecretRef.Key, err)
	}
	return &pair, nil
}
