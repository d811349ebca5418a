// Package awstest runs a real moto server (moto_server, an AWS API emulator)
// on loopback for the AWS providers' tests.
package awstest

import (
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// StartMoto starts moto_server on a free loopback port for the test and
// returns its endpoint. moto has no persistence: every test gets a clean AWS.
func StartMoto(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		t.Fatal("moto_server not found: the AWS provider tests need it (pip install 'moto[server]'); make test checks for it")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting moto_server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(endpoint + "/moto-api/"); err == nil {
			resp.Body.Close()
			return endpoint
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("moto_server did not answer within 30s")
	return ""
}
