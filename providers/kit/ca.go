package kit

import (
	"context"
	"crypto/x509"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// MaxCABundleBytes bounds a CA bundle read from caBundle or caProvider:
// 128 KiB of PEM holds a public root bundle with room to spare, and is what
// eso parses at each connection.
const MaxCABundleBytes = 128 << 10

// TrustedCA returns the PEM bundle to trust for a server's certificate:
// bundle, or what ca names in namespace (the request's credentials
// namespace, never one a configuration names), or nil for the system roots.
// ConfigMaps and unmanaged Secrets are not in eso's cache, so both are read
// with r, the API reader. A bundle holding no PEM certificate, or over
// MaxCABundleBytes, is an invalid configuration.
func TrustedCA(ctx context.Context, r client.Reader, bundle []byte, ca *provv1.CAProvider, namespace string) ([]byte, error) {
	if len(bundle) > 0 && ca != nil {
		return nil, fmt.Errorf("%w: set caBundle or caProvider, not both", plugin.ErrInvalidConfig)
	}
	pem := bundle
	if ca != nil {
		var err error
		if pem, err = caProviderValue(ctx, r, ca, namespace); err != nil {
			return nil, err
		}
	}
	if len(pem) == 0 {
		return nil, nil
	}
	if len(pem) > MaxCABundleBytes {
		return nil, fmt.Errorf("%w: the CA bundle (caBundle or caProvider) is over %s", plugin.ErrInvalidConfig, plugin.FormatBytes(MaxCABundleBytes))
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%w: the CA bundle (caBundle or caProvider) holds no PEM certificate", plugin.ErrInvalidConfig)
	}
	return pem, nil
}

func caProviderValue(ctx context.Context, r client.Reader, p *provv1.CAProvider, namespace string) ([]byte, error) {
	switch p.Type {
	case provv1.CAProviderSecret:
		return CredentialValue(ctx, r, namespace, p.Name, p.Key)
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
