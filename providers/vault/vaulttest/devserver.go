// Package vaulttest runs a real Vault dev server (built from Go modules by
// `make vault`, path in VAULT_BIN) on loopback for the Vault provider's tests.
package vaulttest

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	vault "github.com/hashicorp/vault/api"
)

// RootToken is the dev server's root token.
const RootToken = "root"

// Start starts `vault server -dev` for the test and returns a root client.
func Start(t testing.TB) *vault.Client {
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
	cmd := exec.Command(bin, "server", "-dev", "-dev-root-token-id="+RootToken, "-dev-listen-address="+addr)
	cmd.Env = append(os.Environ(), "VAULT_LOG_LEVEL=error")
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting vault: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	url := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url + "/v1/sys/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				cfg := vault.DefaultConfig()
				cfg.Address = url
				c, err := vault.NewClient(cfg)
				if err != nil {
					t.Fatal(err)
				}
				c.SetToken(RootToken)
				return c
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("vault dev server did not become healthy within 30s")
	return nil
}
