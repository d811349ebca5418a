package secrettemplate

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

func selfSigned(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, string, string) {
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

func TestPkcs12RoundTrip(t *testing.T) {
	ca, caKey, caPEM, _ := selfSigned(t, "ca", nil, nil)
	_, _, leafPEM, leafKeyPEM := selfSigned(t, "leaf", ca, caKey)

	pfx, err := fullPemToPkcs12Pass(leafPEM+caPEM, leafKeyPEM, "pw")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := fullPemToPkcs12Pass(leafPEM+caPEM, leafKeyPEM, "pw")
	if pfx != again {
		t.Error("the same input must give the same archive (no rewrite on refresh)")
	}
	if key, err := pkcs12KeyPass("pw", pfx); err != nil || key != leafKeyPEM {
		t.Errorf("pkcs12keyPass: %v (round trip differs: %v)", err, key != leafKeyPEM)
	}
	certs, err := pkcs12CertPass("pw", pfx)
	if err != nil || certs != leafPEM+caPEM {
		t.Errorf("pkcs12certPass: %v (chain differs: %v)", err, certs != leafPEM+caPEM)
	}
	if _, err := pkcs12KeyPass("wrong", pfx); err == nil {
		t.Error("a wrong password opened the archive")
	}

	plain, err := pemToPkcs12(leafPEM+caPEM, leafKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if certs, err := pkcs12Cert(plain); err != nil || certs != leafPEM {
		t.Errorf("pemToPkcs12 must hold only the leaf: %v", err)
	}
	if _, err := pkcs12Key("not an archive: s3cr3t"); err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("bad input: %v", err)
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
	tpl := &esv1.ExternalSecretTemplate{Data: map[string]string{"keystore": `{{ pemToPkcs12 (index . "tls.crt") (index . "tls.key") | b64enc }}`}}
	res, err := Render(tpl, data, Sources{})
	if err != nil || len(res.Data["keystore"]) == 0 {
		t.Fatalf("template with pemToPkcs12: %v", err)
	}
}
