package wire

import (
	"crypto/x509"
	"net/url"
	"slices"
	"strings"
)

// A provider process serves whoever presents a client certificate its CA
// signed, and a request names the namespaces it acts in. So the certificate
// also says for whom its holder may act, as URI SANs:
//
//   - urn:eso:role:core: eso-core, which may act for any namespace because
//     it enforced the namespace rules (store kinds, conditions,
//     authenticationScope) before calling;
//   - urn:eso:namespace:<name>, once per namespace: a caller that may act in
//     those namespaces only.
//
// A certificate with neither may do nothing but the handshake.
const (
	CoreIdentityURI       = "urn:eso:role:core"
	namespaceURIPrefix    = "urn:eso:namespace:"
	maxIdentityNamespaces = 256
)

// NamespaceURI is the URI SAN that lets a certificate act in namespace.
func NamespaceURI(namespace string) *url.URL {
	u, _ := url.Parse(namespaceURIPrefix + namespace)
	return u
}

// CoreURI is the URI SAN of eso-core's certificate.
func CoreURI() *url.URL {
	u, _ := url.Parse(CoreIdentityURI)
	return u
}

// Identity is what a caller may act for.
type Identity struct {
	// Core may act for every namespace.
	Core bool
	// Namespaces are the namespaces a non-core caller may act in.
	Namespaces []string
	// Name describes the caller in logs and errors (the certificate's
	// subject).
	Name string
}

// IdentityOf reads a verified client certificate's identity.
func IdentityOf(cert *x509.Certificate) Identity {
	id := Identity{Name: cert.Subject.String()}
	for _, u := range cert.URIs {
		s := u.String()
		switch {
		case s == CoreIdentityURI:
			id.Core = true
		case strings.HasPrefix(s, namespaceURIPrefix) && len(id.Namespaces) < maxIdentityNamespaces:
			if ns := strings.TrimPrefix(s, namespaceURIPrefix); ns != "" {
				id.Namespaces = append(id.Namespaces, ns)
			}
		}
	}
	return id
}

// MayActIn reports whether the caller may act in namespace.
func (id Identity) MayActIn(namespace string) bool {
	return id.Core || slices.Contains(id.Namespaces, namespace)
}
