package grpcclient

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Options tune how core talks to provider processes. The zero value of a
// field takes its default.
type Options struct {
	// CoreCertificate is core's own client certificate Secret (the one core
	// issues with --provider-certificates-namespace), used by endpoints that
	// name none. It carries core's identity, which a provider process lets
	// act for any namespace, so it never leaves eso's namespace: tenants need
	// no copy of it.
	CoreCertificate *types.NamespacedName
	// Insecure lets endpoints without a client certificate connect in
	// plaintext (--remote-providers-insecure) when there is no
	// CoreCertificate. Off, they are refused.
	Insecure bool
	// CallTimeout bounds each attempt of a call. Default 30s.
	CallTimeout time.Duration
	// Attempts caps how often a call that failed with a retryable code
	// (wire.Retryable) is made in all. Default 3.
	Attempts int
	// Backoff is the wait before the second attempt; it doubles after each.
	// Default 200ms.
	Backoff time.Duration
	// IdleTimeout is how long a connection no client uses stays open.
	// Default 5m.
	IdleTimeout time.Duration
	// CertificateTTL is how long a client certificate Secret read from the
	// API server is trusted before it is read again, so that a burst of
	// syncs costs one read while a rotation is still seen within seconds.
	// Default 5s; negative reads it every time.
	CertificateTTL time.Duration
}

// Defaults of Options.
const (
	DefaultCallTimeout    = 30 * time.Second
	DefaultAttempts       = 3
	DefaultBackoff        = 200 * time.Millisecond
	MaxMessageSize        = 4 << 20
	DefaultIdleTimeout    = 5 * time.Minute
	DefaultCertificateTTL = 5 * time.Second
)

func (o Options) withDefaults() Options {
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.CertificateTTL == 0 {
		o.CertificateTTL = DefaultCertificateTTL
	}
	return o
}
