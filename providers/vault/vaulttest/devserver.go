// Package vaulttest runs a real Vault dev server (built from Go modules by
// `make vault`, path in VAULT_BIN) on loopback for the Vault provider's tests.
package vaulttest

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	vault "github.com/hashicorp/vault/api"
)

// RootToken is the dev server's root token.
const RootToken = "root"

// Start starts `vault server -dev` for the test and returns a root client.
func Start(t testing.TB) *vault.Client {
	t.Helper()
	root, _ := start(t, false)
	return root
}

// StartTLS starts `vault server -dev -dev-tls`, which listens with HTTPS
// (and asks clients for certificates, for cert auth) under a CA Vault
// generates. It returns a root client trusting that CA, and the CA as PEM.
func StartTLS(t testing.TB) (root *vault.Client, caPEM []byte) {
	t.Helper()
	return start(t, true)
}

func start(t testing.TB, withTLS bool) (*vault.Client, []byte) {
	t.Helper()
	bin := os.Getenv("VAULT_BIN")
	if bin == "" {
		t.Fatal("VAULT_BIN is not set: run the tests with `make test`, which builds the Vault server")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	args := []string{"server", "-dev", "-dev-root-token-id=" + RootToken, "-dev-listen-address=" + addr}
	scheme, certDir := "http", ""
	if withTLS {
		// Vault writes vault-ca.pem, vault-cert.pem and vault-key.pem here.
		certDir = t.TempDir()
		args = append(args, "-dev-tls", "-dev-tls-cert-dir="+certDir)
		scheme = "https"
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "VAULT_LOG_LEVEL=error")
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting vault: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	url := scheme + "://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var caPEM []byte
		httpClient := http.DefaultClient
		if withTLS {
			// The CA file appears once Vault has generated it.
			if caPEM, err = os.ReadFile(filepath.Join(certDir, "vault-ca.pem")); err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			httpClient = trusting(t, caPEM)
		}
		if resp, err := httpClient.Get(url + "/v1/sys/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return rootClient(t, url, caPEM), caPEM
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("vault dev server did not become healthy within 30s")
	return nil, nil
}

func trusting(t testing.TB, caPEM []byte) *http.Client {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("vault-ca.pem holds no certificate")
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

func rootClient(t testing.TB, url string, caPEM []byte) *vault.Client {
	cfg := vault.DefaultConfig()
	cfg.Address = url
	if caPEM != nil {
		if err := cfg.ConfigureTLS(&vault.TLSConfig{CACertBytes: caPEM}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := vault.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.SetToken(RootToken)
	return c
}
