package faultprovider

import (
	"testing"
	"time"

	"github.com/eso-dev/eso/app/grpcclient/grpcclienttest"
)

// Certificate is which server certificate the provider presents.
type Certificate int

const (
	// Good is a fresh certificate from the CA core trusts.
	Good Certificate = iota
	// Expired is from the CA core trusts, but expired an hour ago.
	Expired
	// WrongCA is current, from a CA core does not trust.
	WrongCA
)

func (c Certificate) String() string {
	switch c {
	case Good:
		return "good"
	case Expired:
		return "expired"
	case WrongCA:
		return "wrong CA"
	}
	return "unknown"
}

// authority is a CA made for one test: grpcclienttest's CA under the
// names the fault provider uses.
type authority struct {
	*grpcclienttest.CA
	pem []byte
}

func newAuthority(t testing.TB, name string) *authority {
	t.Helper()
	ca := grpcclienttest.NewCA(t, name)
	return &authority{CA: ca, pem: ca.PEM}
}

// issue signs a leaf for cn valid from notBefore to notAfter: a server
// certificate for localhost and 127.0.0.1, or a client certificate. It
// returns the certificate and key PEM.
func (a *authority) issue(t testing.TB, cn string, server bool, notBefore, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	return a.IssueBetween(t, cn, server, notBefore, notAfter)
}
