package server

import (
	"crypto/tls"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

// tlsServer accepts connections with cfg and reports each handshake's
// outcome as the server saw it.
func tlsServer(t *testing.T, cfg *tls.Config) (string, <-chan error) {
	t.Helper()
	lis, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lis.Close() })
	results := make(chan error, 10)
	go func() {
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			err = conn.(*tls.Conn).Handshake()
			results <- err
			if err == nil {
				_, _ = conn.Write([]byte("ok"))
			}
			_ = conn.Close()
		}
	}()
	return lis.Addr().String(), results
}

// dial connects with cfg and returns the server certificate's subject, or
// the server's verdict on the handshake.
func dial(t *testing.T, addr string, cfg *tls.Config, results <-chan error) (string, error) {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	var subject string
	if err == nil {
		subject = conn.ConnectionState().PeerCertificates[0].Subject.CommonName
		// TLS 1.3 clients finish before the server has checked their
		// certificate: read, so the server's verdict has arrived.
		_, _ = io.ReadAll(conn)
		_ = conn.Close()
	}
	select {
	case serverErr := <-results:
		return subject, serverErr
	case <-time.After(5 * time.Second):
		if err != nil {
			return "", err
		}
		t.Fatal("the server saw no handshake")
		return "", nil
	}
}

func TestTLSConfigRequiresVerifiedClientCertificates(t *testing.T) {
	serverCA, clientCA, otherCA := newTestCA(t, "server-ca"), newTestCA(t, "client-ca"), newTestCA(t, "other-ca")
	cfg, err := NewServerTLSConfig(serverFiles(t, t.TempDir(), serverCA, clientCA), time.Hour, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	addr, results := tlsServer(t, cfg)

	if _, err := dial(t, addr, clientTLS(t, clientCA, serverCA), results); err != nil {
		t.Fatalf("a client with a certificate of the client CA was refused: %v", err)
	}
	if _, err := dial(t, addr, clientTLS(t, nil, serverCA), results); err == nil || !strings.Contains(err.Error(), "client didn't provide a certificate") {
		t.Fatalf("a client without a certificate: %v, want refused", err)
	}
	if _, err := dial(t, addr, clientTLS(t, otherCA, serverCA), results); err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Fatalf("a client with a certificate of another CA: %v, want refused", err)
	}
	// The server's own CA signs server certificates, not clients.
	if _, err := dial(t, addr, clientTLS(t, serverCA, serverCA), results); err == nil {
		t.Fatal("a client with a certificate of the server CA was accepted")
	}
}

func TestTLSConfigRequiresTLS12(t *testing.T) {
	serverCA, clientCA := newTestCA(t, "server-ca"), newTestCA(t, "client-ca")
	cfg, err := NewServerTLSConfig(serverFiles(t, t.TempDir(), serverCA, clientCA), time.Hour, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	addr, results := tlsServer(t, cfg)
	old := clientTLS(t, clientCA, serverCA)
	old.MinVersion, old.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
	if _, err := dial(t, addr, old, results); err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatalf("a TLS 1.1 client: %v, want refused", err)
	}
	tls12 := clientTLS(t, clientCA, serverCA)
	tls12.MaxVersion = tls.VersionTLS12
	if _, err := dial(t, addr, tls12, results); err != nil {
		t.Fatalf("a TLS 1.2 client was refused: %v", err)
	}
}

// TestTLSConfigReloadsRotatedFiles rotates the server certificate and the
// client CA on disk: new connections use the new ones, without restart.
func TestTLSConfigReloadsRotatedFiles(t *testing.T) {
	dir := t.TempDir()
	oldServerCA, oldClientCA := newTestCA(t, "server-ca-1"), newTestCA(t, "client-ca-1")
	files := serverFiles(t, dir, oldServerCA, oldClientCA)
	cfg, err := NewServerTLSConfig(files, 0, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	addr, results := tlsServer(t, cfg)
	newServerCA, newClientCA := newTestCA(t, "server-ca-2"), newTestCA(t, "client-ca-2")
	trustsBoth := func(clientCA *testCA) *tls.Config { return clientTLS(t, clientCA, oldServerCA, newServerCA) }

	if _, err := dial(t, addr, trustsBoth(oldClientCA), results); err != nil {
		t.Fatalf("before rotation: %v", err)
	}
	issuer := func() string {
		conn, err := tls.Dial("tcp", addr, trustsBoth(newClientCA))
		if err != nil {
			<-results
			return ""
		}
		defer conn.Close()
		<-results
		return conn.ConnectionState().PeerCertificates[0].Issuer.CommonName
	}

	// Half a rotation: the new certificate without its key. The old
	// material stays in use.
	newCert, newKey := newServerCA.issue(t, "eso-provider", true)
	writeFile(t, files.CertFile, newCert)
	if _, err := dial(t, addr, trustsBoth(oldClientCA), results); err != nil {
		t.Fatalf("with a certificate that does not match its key yet: %v, want the old material kept", err)
	}

	writeFile(t, files.KeyFile, newKey)
	writeFile(t, files.ClientCAFile, newClientCA.certPEM)
	if got := issuer(); got != "server-ca-2" {
		t.Fatalf("after rotation the server certificate is issued by %q, want server-ca-2", got)
	}
	if _, err := dial(t, addr, trustsBoth(newClientCA), results); err != nil {
		t.Fatalf("a client of the new CA after rotation: %v", err)
	}
	if _, err := dial(t, addr, trustsBoth(oldClientCA), results); err == nil {
		t.Fatal("a client of the replaced CA is still accepted after rotation")
	}
}

func TestTLSConfigRefusesMissingMaterial(t *testing.T) {
	files := serverFiles(t, t.TempDir(), newTestCA(t, "s"), newTestCA(t, "c"))
	files.ClientCAFile += ".missing"
	if _, err := NewServerTLSConfig(files, time.Hour, logr.Discard()); err == nil || !strings.Contains(err.Error(), "reading TLS material") {
		t.Fatalf("error %v, want reading TLS material", err)
	}
	files = serverFiles(t, t.TempDir(), newTestCA(t, "s"), newTestCA(t, "c"))
	writeFile(t, files.ClientCAFile, []byte("not a certificate"))
	if _, err := NewServerTLSConfig(files, time.Hour, logr.Discard()); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("error %v, want an empty CA bundle refused", err)
	}
}
