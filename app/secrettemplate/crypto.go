package secrettemplate

import (
	"crypto/aes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// PKCS#12 and JWK helpers, as upstream ESO offers them. Their errors never
// quote their input.

// readPkcs12Key returns the archive's private key as PKCS#8 PEM, charging
// the archive's work to spend when given.
func readPkcs12Key(spend func(int64) error, password, input string) (string, error) {
	key, _, _, err := decodePkcs12(spend, password, input)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", errors.New("unsupported private key in the PKCS#12 archive")
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), nil
}

// readPkcs12Cert returns the archive's certificates as PEM, ordered leaf →
// intermediates → root when they form one chain, else the certificate and
// then its CA certificates as stored.
func readPkcs12Cert(spend func(int64) error, password, input string) (string, error) {
	_, cert, chain, err := decodePkcs12(spend, password, input)
	if err != nil {
		return "", err
	}
	certs := append([]*x509.Certificate{cert}, chain...)
	if ordered, err := orderChain(certs); err == nil {
		certs = ordered
	}
	return encodeCertificates(certs...), nil
}

// decodePkcs12 decodes an archive once checkPkcs12 has bounded the work
// that takes, charging it to spend (a render's budget) when given.
func decodePkcs12(spend func(int64) error, password, input string) (any, *x509.Certificate, []*x509.Certificate, error) {
	if err := checkPkcs12Sizes(len(input), password); err != nil {
		return nil, nil, nil, err
	}
	der := []byte(input)
	if err := checkPkcs12(der, password, spend); err != nil {
		return nil, nil, nil, err
	}
	key, cert, chain, err := pkcs12.DecodeChain(der, password)
	if err != nil {
		return nil, nil, nil, errPkcs12Password
	}
	return key, cert, chain, nil
}

// pkcs12Reader builds pkcs12key and pkcs12cert from read (readPkcs12Key or
// readPkcs12Cert), or with password their Pass variants: functions whose
// cost is the key derivation their input asks for, charged to the render's
// budget with spend first.
func pkcs12Reader(read func(spend func(int64) error, password, input string) (string, error), password bool) func(spend func(int64) error) any {
	return func(spend func(int64) error) any {
		if !password {
			return func(input string) (string, error) { return read(spend, "", input) }
		}
		return func(password, input string) (string, error) { return read(spend, password, input) }
	}
}

func pemToPkcs12(cert, key string) (string, error) { return pemToPkcs12Pass(cert, key, "") }

// pemToPkcs12Pass packs the first certificate and the key into a PKCS#12
// archive, base64-encoded (as upstream).
func pemToPkcs12Pass(cert, key, password string) (string, error) {
	return encodePkcs12(cert, key, password, false)
}

func fullPemToPkcs12(cert, key string) (string, error) { return fullPemToPkcs12Pass(cert, key, "") }

// fullPemToPkcs12Pass packs every certificate of cert (leaf first, then its
// chain as given) and the key, base64-encoded.
func fullPemToPkcs12Pass(cert, key, password string) (string, error) {
	return encodePkcs12(cert, key, password, true)
}

func pemTruststoreToPKCS12(cert string) (string, error) { return pemTruststoreToPKCS12Pass(cert, "") }

// pemTruststoreToPKCS12Pass packs every certificate of cert into a PKCS#12
// trust store (no key), base64-encoded. An empty input gives an empty
// trust store, as upstream.
func pemTruststoreToPKCS12Pass(cert, password string) (string, error) {
	certs, err := pemCertificates(cert)
	if err != nil {
		return "", err
	}
	if len(certs) == 0 && strings.TrimSpace(cert) != "" {
		return "", errors.New("no certificate in the PEM input")
	}
	enc := pkcs12.Modern2023.WithRand(pkcs12Entropy("truststore", cert, password))
	pfx, err := enc.EncodeTrustStore(certs, password)
	if err != nil {
		return "", fmt.Errorf("encoding PKCS#12: %w", err)
	}
	return base64.StdEncoding.EncodeToString(pfx), nil
}

// pemCertificates parses the CERTIFICATE blocks of a PEM input, skipping
// blocks of other types.
func pemCertificates(input string) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	rest := fromFirstBlock(input)
	for {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return certs, nil
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, errors.New("a CERTIFICATE block does not parse")
		}
		certs = append(certs, c)
	}
}

func encodePkcs12(certPEM, keyPEM, password string, withChain bool) (string, error) {
	certs, err := pemCertificates(certPEM)
	if err != nil {
		return "", err
	}
	if len(certs) == 0 {
		return "", errors.New("no certificate in the PEM input")
	}
	keyBlock, _ := pem.Decode(fromFirstBlock(keyPEM))
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
	enc := pkcs12.Modern2023.WithRand(pkcs12Entropy(certPEM, keyPEM, password))
	pfx, err := enc.Encode(key, certs[0], ca, password)
	if err != nil {
		return "", fmt.Errorf("encoding PKCS#12: %w", err)
	}
	return base64.StdEncoding.EncodeToString(pfx), nil
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

// pkcs12Entropy gives an archive's salts and IVs; tests replace it.
var pkcs12Entropy = deterministicStream

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

// decryptAES decrypts what sprig's encryptAES writes: base64 of a 16-byte
// IV and AES-256-CBC ciphertext, under the password's first 32 bytes
// (zero-padded). Unlike sprig's it refuses input that is not that, where
// sprig's panics or returns noise.
func decryptAES(password, crypt64 string) (string, error) {
	if crypt64 == "" {
		return "", nil
	}
	raw, err := base64.StdEncoding.DecodeString(crypt64)
	if err != nil {
		return "", errors.New("the input is not base64")
	}
	if len(raw) < 2*aes.BlockSize || len(raw)%aes.BlockSize != 0 {
		return "", errors.New("the input is not an IV and whole AES blocks")
	}
	key := make([]byte, 32)
	copy(key, password)
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", err
	}
	out, err := cbcOpen(block, raw[:aes.BlockSize], raw[aes.BlockSize:])
	if err != nil {
		return "", errors.New("the password does not decrypt the input")
	}
	return string(out), nil
}

// buildCustomCert is sprig's (a certificate and key, base64-encoded PEM,
// checked and returned as .Cert and .Key), refusing a key over
// maxKeyBytes before it is parsed.
func buildCustomCert(build any) func(b64cert, b64key string) (any, error) {
	fn := reflect.ValueOf(build)
	return func(b64cert, b64key string) (any, error) {
		if base64.StdEncoding.DecodedLen(len(b64key)) > maxKeyBytes {
			return nil, errKeyTooLarge
		}
		out := fn.Call([]reflect.Value{reflect.ValueOf(b64cert), reflect.ValueOf(b64key)})
		if err, _ := out[1].Interface().(error); err != nil {
			return nil, err
		}
		return out[0].Interface(), nil
	}
}

func jwkPublicKeyPem(input string) (string, error) {
	if len(input) > maxKeyBytes {
		return "", errKeyTooLarge
	}
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

// maxKeyBytes bounds the keys a template function parses: an 8192-bit RSA
// key takes about 5 KiB; parsing (and validating) one grows with the cube of
// its size, and a tenant chooses the key.
const maxKeyBytes = 16 << 10

var errKeyTooLarge = fmt.Errorf("the key is larger than %d bytes (an 8192-bit RSA key fits)", maxKeyBytes)

func jwkPrivateKeyPem(input string) (string, error) {
	if len(input) > maxKeyBytes {
		return "", errKeyTooLarge
	}
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
