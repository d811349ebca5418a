package secrettemplate

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// PKCS#12 and JWK helpers, as upstream ESO offers them. Their errors never
// quote their input.

func pkcs12Key(input string) (string, error) { return pkcs12KeyPass("", input) }

func pkcs12KeyPass(password, input string) (string, error) {
	key, _, _, err := pkcs12.DecodeChain([]byte(input), password)
	if err != nil {
		return "", errors.New("input is not a PKCS#12 archive this password opens")
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", errors.New("unsupported private key in the PKCS#12 archive")
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), nil
}

func pkcs12Cert(input string) (string, error) { return pkcs12CertPass("", input) }

// pkcs12CertPass returns the certificate and then its CA chain, as PEM.
func pkcs12CertPass(password, input string) (string, error) {
	_, cert, chain, err := pkcs12.DecodeChain([]byte(input), password)
	if err != nil {
		return "", errors.New("input is not a PKCS#12 archive this password opens")
	}
	var b strings.Builder
	for _, c := range append([]*x509.Certificate{cert}, chain...) {
		b.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
	}
	return b.String(), nil
}

func pemToPkcs12(cert, key string) (string, error) { return pemToPkcs12Pass(cert, key, "") }

// pemToPkcs12Pass packs the first certificate and the key.
func pemToPkcs12Pass(cert, key, password string) (string, error) {
	return encodePkcs12(cert, key, password, false)
}

func fullPemToPkcs12(cert, key string) (string, error) { return fullPemToPkcs12Pass(cert, key, "") }

// fullPemToPkcs12Pass packs every certificate of cert (leaf first, then its
// chain) and the key.
func fullPemToPkcs12Pass(cert, key, password string) (string, error) {
	return encodePkcs12(cert, key, password, true)
}

func encodePkcs12(certPEM, keyPEM, password string, withChain bool) (string, error) {
	var certs []*x509.Certificate
	rest := []byte(certPEM)
	for {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return "", errors.New("a CERTIFICATE block does not parse")
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return "", errors.New("no certificate in the PEM input")
	}
	keyBlock, _ := pem.Decode([]byte(keyPEM))
	if keyBlock == nil {
		return "", errors.New("no private key in the PEM input")
	}
	key, err := parsePrivateKey(keyBlock.Bytes)
	if err != nil {
		return "", err
	}
	var ca []*x509.Certificate
	if withChain {
		ca = certs[1:]
	}
	// Salts and IVs come from a stream keyed by the input, so the same
	// certificate, key and password always give the same archive: a refresh
	// that changes nothing must not rewrite the Secret.
	enc := pkcs12.Modern2023.WithRand(deterministicStream(certPEM, keyPEM, password))
	pfx, err := enc.Encode(key, certs[0], ca, password)
	if err != nil {
		return "", fmt.Errorf("encoding PKCS#12: %w", err)
	}
	return string(pfx), nil
}

func parsePrivateKey(der []byte) (any, error) {
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParseECPrivateKey(der); err == nil {
		return k, nil
	}
	return nil, errors.New("the private key is not PKCS#8, PKCS#1 or EC")
}

// deterministicStream is an HMAC-SHA256 counter-mode stream keyed by the inputs.
func deterministicStream(parts ...string) io.Reader {
	key := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(key, "%d:%s;", len(p), p)
	}
	return &hmacStream{key: key.Sum(nil)}
}

type hmacStream struct {
	key     []byte
	counter uint64
	buf     []byte
}

func (s *hmacStream) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(s.buf) == 0 {
			m := hmac.New(sha256.New, s.key)
			var c [8]byte
			binary.BigEndian.PutUint64(c[:], s.counter)
			s.counter++
			m.Write(c[:])
			s.buf = m.Sum(nil)
		}
		k := copy(p[n:], s.buf)
		s.buf, n = s.buf[k:], n+k
	}
	return n, nil
}

func jwkPublicKeyPem(input string) (string, error) {
	var k jose.JSONWebKey
	if err := k.UnmarshalJSON([]byte(input)); err != nil {
		return "", errors.New("input is not a JSON Web Key")
	}
	der, err := x509.MarshalPKIXPublicKey(k.Public().Key)
	if err != nil {
		return "", errors.New("the JSON Web Key has no usable public key")
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), nil
}

func jwkPrivateKeyPem(input string) (string, error) {
	var k jose.JSONWebKey
	if err := k.UnmarshalJSON([]byte(input)); err != nil {
		return "", errors.New("input is not a JSON Web Key")
	}
	if k.IsPublic() {
		return "", errors.New("the JSON Web Key holds no private key")
	}
	der, err := x509.MarshalPKCS8PrivateKey(k.Key)
	if err != nil {
		return "", errors.New("the JSON Web Key's private key cannot be encoded as PKCS#8")
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), nil
}
