// Package grpcclient is core's side of the provider protocol: an adapter
// that makes a provider or generator served by `eso --mode=provider` look
// exactly like one compiled in (plugin.Provider, plugin.Generator),
// so core's controllers and conditions treat both the same. Connections are
// mTLS with a client certificate from a Secret, shared by every store using
// the same address and certificate, and checked with Info.Handshake when
// made.
package grpcclient

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eso-dev/eso/providers/plugin"
)

// Remote hands out providers and generators served by provider processes.
type Remote struct {
	opts Options
	pool *pool
}

// New returns a Remote reading client certificate Secrets through reader,
// which should read from the API server: eso's cache holds only the
// Secrets it manages.
func New(reader client.Reader, opts Options) *Remote {
	opts = opts.withDefaults()
	return &Remote{opts: opts, pool: newPool(reader, opts)}
}

// Close closes every connection.
func (r *Remote) Close() { r.pool.close() }

// Provider is the provider of configuration kind served at ep.
func (r *Remote) Provider(ep Endpoint, kind string) plugin.Provider {
	return &provider{remote: r, ep: ep, kind: kind}
}

// Generator is the generator of configuration kind served at ep.
func (r *Remote) Generator(ep Endpoint, kind string) plugin.Generator {
	return &generator{remote: r, ep: ep, kind: kind}
}

// CertificateVersion identifies the version of ep's client certificate
// Secret (empty without one), so that callers keying clients on it build
// new ones when the certificate rotates.
func (r *Remote) CertificateVersion(ctx context.Context, ep Endpoint) (string, error) {
	if ep.Certificate == nil {
		return "", nil
	}
	secret, err := r.pool.certificate(ctx, *ep.Certificate)
	if err != nil {
		return "", err
	}
	return certVersion(secret), nil
}
