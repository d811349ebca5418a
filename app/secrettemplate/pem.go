package secrettemplate

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
)

// PEM helpers, as upstream ESO's engine v2 offers them. Their errors never
// quote their input.

// fromFirstBlock drops the text before the first "-----BEGIN", so that a
// preamble is skipped whatever the Go release's pem.Decode does with it.
func fromFirstBlock(input string) []byte {
	if i := strings.Index(input, "-----BEGIN"); i > 0 {
		input = input[i:]
	}
	return []byte(input)
}

// filterPEM keeps the PEM blocks of one type, e.g. "CERTIFICATE" or
// "private key" (the type is matched in any letter case). An input that
// holds no block of that type gives "", unless it ends in text that is not
// PEM, which is an error.
func filterPEM(blockType, input string) (string, error) {
	var out bytes.Buffer
	rest := fromFirstBlock(input)
	for {
		block, after := pem.Decode(rest)
		if block == nil {
			break
		}
		rest = after
		if strings.EqualFold(block.Type, blockType) {
			if err := pem.Encode(&out, block); err != nil {
				return "", err
			}
		}
	}
	if out.Len() == 0 && len(rest) > 0 {
		return "", errors.New("no PEM block of that type, and text that is not PEM")
	}
	return out.String(), nil
}

// certSANs lists the subject alternative names of the first certificate of
// a PEM input: DNS names, then IP addresses, e-mail addresses and URIs.
func certSANs(input string) ([]string, error) {
	block, _ := pem.Decode(fromFirstBlock(input))
	if block == nil {
		return nil, errors.New("no PEM block in the input")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, errors.New("the first PEM block is not a certificate")
	}
	sans := make([]string, 0, len(cert.DNSNames)+len(cert.IPAddresses)+len(cert.EmailAddresses)+len(cert.URIs))
	sans = append(sans, cert.DNSNames...)
	for _, ip := range cert.IPAddresses {
		sans = append(sans, ip.String())
	}
	sans = append(sans, cert.EmailAddresses...)
	for _, u := range cert.URIs {
		sans = append(sans, u.String())
	}
	return sans, nil
}

// The parts of a chain filterCertChain picks, as upstream spells them.
const (
	chainLeaf         = "leaf"
	chainIntermediate = "intermediate"
	chainRoot         = "root"
)

// filterCertChain picks one part of a PEM certificate chain, given in any
// order: the leaf, the intermediates (leaf side first) or the root. A part
// the chain does not have gives "", as does an unknown part. Every PEM
// block must be a certificate, and the certificates one chain.
func filterCertChain(part, input string) (string, error) {
	certs, err := parseCertificates(fromFirstBlock(input))
	if err != nil {
		return "", err
	}
	chain, err := orderChain(certs)
	if err != nil {
		return "", err
	}
	switch part {
	case chainLeaf:
		if leaf := chain[0]; !selfIssued(leaf) {
			return encodeCertificates(leaf), nil
		}
	case chainIntermediate:
		var out []*x509.Certificate
		for _, c := range chain[1:] {
			if selfIssued(c) {
				break
			}
			out = append(out, c)
		}
		return encodeCertificates(out...), nil
	case chainRoot:
		if root := chain[len(chain)-1]; selfIssued(root) {
			return encodeCertificates(root), nil
		}
	}
	return "", nil
}

// selfIssued: the certificate names no other issuer key than its own (a
// root, for chain ordering).
func selfIssued(c *x509.Certificate) bool {
	return c.AuthorityKeyId == nil || bytes.Equal(c.AuthorityKeyId, c.SubjectKeyId)
}

// parseCertificates reads every PEM block of data as a certificate.
func parseCertificates(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			return certs, nil
		}
		data = rest
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, errors.New("a PEM block of the chain is not a certificate")
		}
		certs = append(certs, c)
	}
}

// orderChain orders certificates leaf → intermediates → root by their key
// identifiers, as upstream does: a certificate's issuer is the first other
// certificate whose subject key ID is its authority key ID; the leaf is the
// one certificate that issued none of the others. It checks no signature,
// date or usage: it orders, it does not verify.
//
// Unlike upstream, a certificate without an authority key ID has no issuer
// here: upstream pairs it with any certificate without a subject key ID,
// so a root and a leaf made without one (as Go makes leaves) look like a
// cycle and the chain cannot be ordered.
func orderChain(certs []*x509.Certificate) ([]*x509.Certificate, error) {
	bySubjectKey := map[string][]int{}
	for i, c := range certs {
		k := string(c.SubjectKeyId)
		bySubjectKey[k] = append(bySubjectKey[k], i)
	}
	issuer := make([]int, len(certs))
	issuedAny := make([]bool, len(certs))
	for i, c := range certs {
		issuer[i] = -1
		if len(c.AuthorityKeyId) == 0 {
			continue
		}
		for _, j := range bySubjectKey[string(c.AuthorityKeyId)] {
			if j != i {
				issuer[i], issuedAny[j] = j, true
				break
			}
		}
	}
	leaf := -1
	for i := range certs {
		if issuedAny[i] {
			continue
		}
		if leaf >= 0 {
			return nil, errors.New("the certificates are not one chain: several leaves or a disjunct certificate")
		}
		leaf = i
	}
	if leaf < 0 {
		return nil, errors.New("no leaf certificate")
	}
	var chain []*x509.Certificate
	for i := leaf; i >= 0; i = issuer[i] {
		if len(chain) == len(certs) {
			return nil, errors.New("the certificates' issuers form a cycle")
		}
		chain = append(chain, certs[i])
	}
	return chain, nil
}

func encodeCertificates(certs ...*x509.Certificate) string {
	var b strings.Builder
	for _, c := range certs {
		b.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
	}
	return b.String()
}
