package grpcclient

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// Endpoint is a provider process and how core proves who it is to it.
type Endpoint struct {
	// Address is host:port of the provider's gRPC server.
	Address string
	// Certificate names core's client certificate: a Secret of type
	// kubernetes.io/tls with tls.crt, tls.key and the ca.crt that signed the
	// server's certificate (the layout cert-manager writes). Nil connects
	// in plaintext, which only an eso started insecure allows.
	Certificate *types.NamespacedName

	// refused is why the configuration cannot work; every call returns it.
	refused error
}

// Errors of endpoints and connections.
var (
	// ErrPlaintextRefused: an address without a client certificate while eso
	// does not connect in plaintext.
	ErrPlaintextRefused = errors.New("providerConfig.auth.clientCertificate is not set, and eso connects to providers without TLS only when started with --remote-providers-insecure")
	// ErrCertificateNamespace: a namespaced store or generator names a
	// client certificate Secret of another namespace.
	ErrCertificateNamespace = errors.New("the client certificate Secret must be in the object's own namespace")
	// ErrIncompatibleProvider: the server does not speak this core's
	// protocol major, or is no eso provider at all.
	ErrIncompatibleProvider = fmt.Errorf("remote provider: %w", plugin.ErrIncompatible)
	// ErrKindNotServed: the server does not serve the configuration kind.
	ErrKindNotServed = fmt.Errorf("%w: kind not served by the remote provider", plugin.ErrIncompatible)
)

// Endpoint is the endpoint of a providerConfig. ownNamespace is the
// namespace of a SecretStore or Generator, whose certificate Secret must be
// in it; it is empty for the cluster-scoped kinds, whose Secret is in the
// namespace the reference names or, if it names none, refNamespace (the
// provider configuration's).
func (r *Remote) Endpoint(address string, auth *ssv2.ProviderAuth, ownNamespace, refNamespace string) (Endpoint, error) {
	ep := Endpoint{Address: address}
	if auth != nil && auth.ServiceAccountRef != nil {
		// Refused rather than ignored: a store that asks for it must not
		// silently connect with less.
		ep.refused = fmt.Errorf("%w: providerConfig.auth.serviceAccountRef is not supported for remote providers; use clientCertificate", plugin.ErrInvalidConfig)
	}
	if auth == nil || auth.ClientCertificate == nil {
		if r.opts.CoreCertificate != nil {
			ep.Certificate = r.opts.CoreCertificate
			return ep, nil
		}
		if !r.opts.Insecure {
			return ep, ErrPlaintextRefused
		}
		return ep, nil
	}
	ref := auth.ClientCertificate
	ns := ref.Namespace
	switch {
	case ownNamespace != "" && ns != "" && ns != ownNamespace:
		return ep, fmt.Errorf("%w: Secret %s/%s is not in namespace %s", ErrCertificateNamespace, ns, ref.Name, ownNamespace)
	case ownNamespace != "":
		ns = ownNamespace
	case ns == "":
		ns = refNamespace
	}
	ep.Certificate = &types.NamespacedName{Namespace: ns, Name: ref.Name}
	return ep, nil
}

func (e Endpoint) String() string {
	if e.Certificate == nil {
		return e.Address + " (plaintext)"
	}
	return e.Address + " (client certificate " + e.Certificate.String() + ")"
}
