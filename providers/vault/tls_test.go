package vault

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	vault "github.com/hashicorp/vault/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
)

// testCA is a certificate authority for client certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  string
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

// issue returns a client certificate for commonName and its private key, PEM.
func (ca *testCA) issue(t *testing.T, commonName string) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: commonName},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}

func TestCertAuth(t *testing.T) {
	ctx := context.Background()
	root, serverCA := vaulttest.StartTLS(t)
	write(t, root, "secret/data/app/db", map[string]any{"data": map[string]any{"password": "pw"}})
	if err := root.Sys().PutPolicy("app-read", `path "secret/data/app/*" { capabilities = ["read"] }`); err != nil {
		t.Fatal(err)
	}
	if err := root.Sys().EnableAuthWithOptions("cert", &vault.EnableAuthOptions{Type: "cert"}); err != nil {
		t.Fatal(err)
	}
	clientCA := newTestCA(t, "eso test client CA")
	write(t, root, "auth/cert/certs/eso", map[string]any{
		"certificate": clientCA.pem, "allowed_common_names": "eso-client",
		"token_policies": "app-read", "token_ttl": "1h",
	})
	spec := provv1.VaultSpec{Server: root.Address(), Path: "secret", Version: "v2", CABundle: serverCA,
		Auth: provv1.VaultAuth{Cert: &provv1.VaultCertAuth{Name: "eso",
			ClientCert: provv1.SecretKeySelector{Name: "vault-creds", Key: "tls.crt"},
			SecretRef:  provv1.SecretKeySelector{Name: "vault-creds", Key: "tls.key"}}}}

	certPEM, keyPEM := clientCA.issue(t, "eso-client")
	c, err := newClient(t, spec, map[string]string{"tls.crt": certPEM, "tls.key": keyPEM})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "app/db", Property: "password"}); err != nil || string(got) != "pw" {
		t.Errorf("read with cert auth = %q, %v", got, err)
	}
	if err := c.(plugin.AuthChecker).CheckAuth(ctx); err != nil {
		t.Errorf("CheckAuth with cert auth: %v", err)
	}
	// Without a role name Vault picks the role matching the certificate.
	unnamed := spec
	unnamed.Auth.Cert = &provv1.VaultCertAuth{ClientCert: spec.Auth.Cert.ClientCert, SecretRef: spec.Auth.Cert.SecretRef}
	c, err = newClient(t, unnamed, map[string]string{"tls.crt": certPEM, "tls.key": keyPEM})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.(plugin.AuthChecker).CheckAuth(ctx); err != nil {
		t.Errorf("CheckAuth with cert auth and no role name: %v", err)
	}

	// A certificate of another CA is refused, and the error shows no key.
	strangerPEM, strangerKeyPEM := newTestCA(t, "someone else's CA").issue(t, "eso-client")
	c, err = newClient(t, spec, map[string]string{"tls.crt": strangerPEM, "tls.key": strangerKeyPEM})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "app/db"})
	if !errors.Is(err, plugin.ErrAuthFailed) || !strings.Contains(err.Error(), "auth/cert") {
		t.Errorf("login with a certificate of another CA: %v, want ErrAuthFailed naming auth/cert", err)
	}
	if err != nil && (strings.Contains(err.Error(), "PRIVATE KEY") || strings.Contains(err.Error(), "CERTIFICATE")) {
		t.Errorf("error shows PEM material: %v", err)
	}
	if err := c.(plugin.AuthChecker).CheckAuth(ctx); !errors.Is(err, plugin.ErrAuthFailed) {
		t.Errorf("CheckAuth with a certificate of another CA: %v, want ErrAuthFailed", err)
	}

	// A key that does not belong to the certificate is a configuration
	// error, found when the pair is read: at the login.
	mismatched, err := newClient(t, spec, map[string]string{"tls.crt": certPEM, "tls.key": strangerKeyPEM})
	if err == nil {
		err = mismatched.(plugin.AuthChecker).CheckAuth(ctx)
	}
	if !errors.Is(err, plugin.ErrInvalidConfig) || strings.Contains(err.Error(), "PRIVATE KEY") {
		t.Errorf("mismatched key: %v, want ErrInvalidConfig without key material", err)
	}
}

func TestCAProvider(t *testing.T) {
	ctx := context.Background()
	root, serverCA := vaulttest.StartTLS(t)
	write(t, root, "secret/data/app/db", map[string]any{"data": map[string]any{"password": "pw"}})
	spec := provv1.VaultSpec{Server: root.Address(), Path: "secret", Version: "v2", Auth: tokenAuth()}
	creds := map[string]string{"token": vaulttest.RootToken, "ca.crt": string(serverCA)}
	caConfigMap := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "vault-ca"},
		Data: map[string]string{"ca.crt": string(serverCA)}}
	read := func(spec provv1.VaultSpec) error {
		t.Helper()
		c, err := newClient(t, spec, creds, caConfigMap.DeepCopy())
		if err != nil {
			return err
		}
		got, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "app/db", Property: "password"})
		if err == nil && string(got) != "pw" {
			t.Errorf("read %q, want pw", got)
		}
		return err
	}

	// eso's own VAULT_* environment does not apply to configured servers:
	// no skipped verification, no agent receiving the requests.
	t.Setenv("VAULT_SKIP_VERIFY", "true")
	t.Setenv("VAULT_AGENT_ADDR", "http://127.0.0.1:1")
	t.Setenv("VAULT_TOKEN", "from-eso-environment")

	// Without the CA the handshake fails, saying so.
	if err := read(spec); err == nil || !strings.Contains(err.Error(), "certificate") || !strings.Contains(err.Error(), "caProvider") {
		t.Errorf("read without the server's CA: %v, want a certificate error pointing at caBundle/caProvider", err)
	}
	for _, p := range []*provv1.CAProvider{
		{Type: provv1.CAProviderConfigMap, Name: "vault-ca", Key: "ca.crt"},
		{Type: provv1.CAProviderSecret, Name: "vault-creds", Key: "ca.crt"},
	} {
		withCA := spec
		withCA.CAProvider = p
		if err := read(withCA); err != nil {
			t.Errorf("read with caProvider %s: %v", p.Type, err)
		}
	}
	for _, p := range []*provv1.CAProvider{
		{Type: provv1.CAProviderConfigMap, Name: "missing", Key: "ca.crt"},
		{Type: provv1.CAProviderConfigMap, Name: "vault-ca", Key: "other"},
		{Type: provv1.CAProviderSecret, Name: "vault-creds", Key: "token"}, // not PEM
	} {
		withCA := spec
		withCA.CAProvider = p
		if err := read(withCA); !errors.Is(err, plugin.ErrInvalidConfig) {
			t.Errorf("caProvider %+v: %v, want ErrInvalidConfig", p, err)
		}
	}
}
