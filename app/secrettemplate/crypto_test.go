package secrettemplate

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"software.sslmate.com/src/go-pkcs12"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

func selfSigned(t testing.TB, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: parent == nil, BasicConstraintsValid: true}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	return cert, key,
		string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
}

// selfSignedCA is selfSigned for an intermediate CA (signed by parent).
func selfSignedCA(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	return cert, key,
		string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
}

func TestPkcs12RoundTrip(t *testing.T) {
	ca, caKey, caPEM, _ := selfSigned(t, "ca", nil, nil)
	_, _, leafPEM, leafKeyPEM := selfSigned(t, "leaf", ca, caKey)

	pfxB64, err := fullPemToPkcs12Pass(leafPEM+caPEM, leafKeyPEM, "pw")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := fullPemToPkcs12Pass(leafPEM+caPEM, leafKeyPEM, "pw")
	if pfxB64 != again {
		t.Error("the same input must give the same archive (no rewrite on refresh)")
	}
	pfx := unbase64(t, pfxB64) // base64, as upstream
	if key, err := readPkcs12Key(nil, "pw", pfx); err != nil || key != leafKeyPEM {
		t.Errorf("pkcs12keyPass: %v (round trip differs: %v)", err, key != leafKeyPEM)
	}
	certs, err := readPkcs12Cert(nil, "pw", pfx)
	if err != nil || certs != leafPEM+caPEM {
		t.Errorf("pkcs12certPass: %v (chain differs: %v)", err, certs != leafPEM+caPEM)
	}
	if _, err := readPkcs12Key(nil, "wrong", pfx); err == nil {
		t.Error("a wrong password opened the archive")
	}

	plain, err := pemToPkcs12(leafPEM+caPEM, leafKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if certs, err := readPkcs12Cert(nil, "", unbase64(t, plain)); err != nil || certs != leafPEM {
		t.Errorf("pemToPkcs12 must hold only the leaf: %v", err)
	}
	if _, err := readPkcs12Key(nil, "", "not an archive: s3cr3t"); err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("bad input: %v", err)
	}
}

func unbase64(t *testing.T, s string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("not base64: %v", err)
	}
	return string(b)
}

// TestPkcs12ChainOrder: pkcs12cert gives leaf → intermediate → root,
// whatever order the archive stores them in, as upstream.
func TestPkcs12ChainOrder(t *testing.T) {
	root, rootKey, rootPEM, _ := selfSigned(t, "root", nil, nil)
	inter, interKey, interPEM, _ := selfSignedCA(t, "intermediate", root, rootKey)
	_, _, leafPEM, leafKeyPEM := selfSigned(t, "leaf", inter, interKey)
	pfx, err := fullPemToPkcs12(leafPEM+rootPEM+interPEM, leafKeyPEM) // stored root first
	if err != nil {
		t.Fatal(err)
	}
	got, err := readPkcs12Cert(nil, "", unbase64(t, pfx))
	if err != nil || got != leafPEM+interPEM+rootPEM {
		t.Errorf("pkcs12cert did not order the chain leaf → intermediate → root (%v)", err)
	}
	for part, want := range map[string]string{"leaf": leafPEM, "intermediate": interPEM, "root": rootPEM} {
		if got, err := filterCertChain(part, rootPEM+leafPEM+interPEM); err != nil || got != want {
			t.Errorf("filterCertChain %s: %v", part, err)
		}
	}
}

func TestPemTruststore(t *testing.T) {
	_, _, caPEM, _ := selfSigned(t, "ca", nil, nil)
	_, _, otherPEM, _ := selfSigned(t, "other", nil, nil)
	out, err := pemTruststoreToPKCS12Pass(caPEM+otherPEM, "pw")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := pemTruststoreToPKCS12Pass(caPEM+otherPEM, "pw"); again != out {
		t.Error("the same input must give the same trust store")
	}
	certs, err := pkcs12.DecodeTrustStore([]byte(unbase64(t, out)), "pw")
	if err != nil || encodeCertificates(certs...) != caPEM+otherPEM {
		t.Errorf("trust store: %v", err)
	}
	if _, err := pemTruststoreToPKCS12("not PEM"); err == nil {
		t.Error("a trust store of text that is not PEM")
	}
}

func TestJWK(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	priv, _ := json.Marshal(jose.JSONWebKey{Key: key})
	pub, _ := json.Marshal(jose.JSONWebKey{Key: &key.PublicKey})

	pubPEM, err := jwkPublicKeyPem(string(pub))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode([]byte(pubPEM))
	if parsed, err := x509.ParsePKIXPublicKey(block.Bytes); err != nil || !parsed.(*ecdsa.PublicKey).Equal(&key.PublicKey) {
		t.Errorf("jwkPublicKeyPem: %v", err)
	}
	privPEM, err := jwkPrivateKeyPem(string(priv))
	if err != nil {
		t.Fatal(err)
	}
	block, _ = pem.Decode([]byte(privPEM))
	if parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes); err != nil || !parsed.(*ecdsa.PrivateKey).Equal(key) {
		t.Errorf("jwkPrivateKeyPem: %v", err)
	}
	if _, err := jwkPrivateKeyPem(string(pub)); err == nil {
		t.Error("a public JWK gave a private key")
	}
}

func TestCryptoHelpersInTemplates(t *testing.T) {
	_, _, certPEM, keyPEM := selfSigned(t, "svc", nil, nil)
	data := map[string][]byte{"tls.crt": []byte(certPEM), "tls.key": []byte(keyPEM)}
	tpl := &esv1.ExternalSecretTemplate{Data: map[string]string{"keystore": `{{ pemToPkcs12 (index . "tls.crt") (index . "tls.key") }}`}}
	res, err := Render(tpl, data, Sources{})
	if err != nil || len(res.Data["keystore"]) == 0 {
		t.Fatalf("template with pemToPkcs12: %v", err)
	}
	if key, err := readPkcs12Key(nil, "", unbase64(t, string(res.Data["keystore"]))); err != nil || key != keyPEM {
		t.Errorf("the keystore is not the base64 archive of the key: %v", err)
	}
}

// TestKeysAreBounded: a key over maxKeyBytes is refused before it is parsed
// (parsing grows with the cube of the key's size, and a tenant picks it).
func TestKeysAreBounded(t *testing.T) {
	huge := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: make([]byte, maxKeyBytes+1)}))
	if _, err := rsaDecrypt("RSA-OAEP", "SHA256", "x", huge); !errors.Is(err, errKeyTooLarge) {
		t.Errorf("rsaDecrypt: %v", err)
	}
	jwk := `{"kty":"RSA","n":"` + strings.Repeat("A", maxKeyBytes) + `"}`
	for name, f := range map[string]func(string) (string, error){"jwkPublicKeyPem": jwkPublicKeyPem, "jwkPrivateKeyPem": jwkPrivateKeyPem} {
		if _, err := f(jwk); !errors.Is(err, errKeyTooLarge) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
