// Package faultprovider is a provider process for tests that misbehaves on
// demand. It serves eso's own provider-mode server (sdk/server) behind
// a gRPC front with mTLS, and can be told at runtime to delay calls, answer
// them with an error code, drop every connection, present an expired or
// untrusted server certificate, or claim another protocol major, until told
// to stop. What it answers when no fault is set is exactly what
// `eso --mode=provider` answers.
package faultprovider

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
	"github.com/eso-dev/eso/app/grpcclient"
	"github.com/eso-dev/eso/sdk/server"
)

// Fault is what the provider does to every call while it is set. The zero
// value is no fault.
type Fault struct {
	// Latency delays each call before it is answered (or failed); a call
	// whose deadline passes first ends with DeadlineExceeded.
	Latency time.Duration
	// Code, if not OK, answers every call with this status instead.
	Code codes.Code
	// ProtocolMajor, if not zero, is the only major Handshake claims.
	ProtocolMajor uint32
}

// certReloadInterval is how often the server may re-read its certificate
// files: short, so that a rotation applies to the next connection.
const certReloadInterval = 10 * time.Millisecond

// Server is the fault-injecting provider on a loopback port.
type Server struct {
	addr     string
	tls      *tls.Config
	files    server.TLSFiles
	backend  *grpc.ClientConn
	serverCA *authority
	clientCA *authority
	stranger *authority
	// probe is a client certificate for PresentedCertificate.
	probe tls.Certificate

	mu    sync.Mutex
	fault Fault
	front *grpc.Server
}

// Start serves backend until the test ends, presenting a Good certificate.
func Start(t testing.TB, backend *server.Server) *Server {
	t.Helper()
	s := &Server{
		serverCA: newAuthority(t, "provider-ca"),
		clientCA: newAuthority(t, "core-ca"),
		stranger: newAuthority(t, "stranger-ca"),
	}
	s.startBackend(t, backend)

	dir := t.TempDir()
	s.files = server.TLSFiles{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"), ClientCAFile: filepath.Join(dir, "ca.crt")}
	writeFile(t, s.files.ClientCAFile, s.clientCA.pem)
	s.Present(t, Good)
	var err error
	if s.tls, err = server.NewServerTLSConfig(s.files, certReloadInterval, logr.Discard()); err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM := s.clientCA.issue(t, "fault-probe", false, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if s.probe, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = lis.Addr().String()
	s.serve(lis)
	t.Cleanup(s.Disconnect)
	return s
}

// startBackend serves backend in memory, in plaintext: the front is what
// core connects to, and what carries the TLS and the faults.
func (s *Server) startBackend(t testing.TB, backend *server.Server) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	endpoint := server.NewEndpoint(lis, backend, server.ServeOptions{Log: logr.Discard()})
	go func() { _ = endpoint.Serve() }()
	conn, err := grpc.NewClient("passthrough:///provider",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	s.backend = conn
	t.Cleanup(func() {
		_ = conn.Close()
		endpoint.Shutdown(context.Background())
	})
}

func (s *Server) serve(lis net.Listener) {
	front := grpc.NewServer(grpc.Creds(credentials.NewTLS(s.tls)), grpc.UnaryInterceptor(s.inject))
	providerv1.RegisterInfoServer(front, infoForwarder{to: providerv1.NewInfoClient(s.backend)})
	providerv1.RegisterSecretStoreProviderServer(front, storeForwarder{to: providerv1.NewSecretStoreProviderClient(s.backend)})
	providerv1.RegisterGeneratorProviderServer(front, generatorForwarder{to: providerv1.NewGeneratorProviderClient(s.backend)})
	s.mu.Lock()
	s.front = front
	s.mu.Unlock()
	go func() { _ = front.Serve(lis) }()
}

// inject applies the current fault to a call.
func (s *Server) inject(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	s.mu.Lock()
	f := s.fault
	s.mu.Unlock()
	if f.Latency > 0 {
		timer := time.NewTimer(f.Latency)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	if f.Code != codes.OK {
		return nil, status.Errorf(f.Code, "fault injected by the test provider: %s", f.Code)
	}
	resp, err := handler(ctx, req)
	if hs, ok := resp.(*providerv1.HandshakeResponse); ok && f.ProtocolMajor != 0 {
		hs.ProtocolMajors = []uint32{f.ProtocolMajor}
	}
	return resp, err
}

// Addr is host:port, for a store's providerConfig.address.
func (s *Server) Addr() string { return s.addr }

// Inject sets the fault every call from now on gets.
func (s *Server) Inject(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = f
}

// Clear ends the fault.
func (s *Server) Clear() { s.Inject(Fault{}) }

// Disconnect closes the listener and every live connection: new
// connections are refused until Reconnect.
func (s *Server) Disconnect() {
	s.mu.Lock()
	front := s.front
	s.front = nil
	s.mu.Unlock()
	if front != nil {
		front.Stop()
	}
}

// Reconnect listens again on the same address.
func (s *Server) Reconnect(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		lis, err := net.Listen("tcp", s.addr)
		if err == nil {
			s.serve(lis)
			return
		}
		// The port may be held for a moment after the listener closed.
		if !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			t.Fatalf("listening again on %s: %v", s.addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// DropConnections closes every connection and listens again at once, so
// the clients' next calls make new connections (and TLS handshakes).
func (s *Server) DropConnections(t testing.TB) {
	t.Helper()
	s.Disconnect()
	s.Reconnect(t)
}

// Present writes a new server certificate of kind c to the certificate
// files, as a rotation of a mounted Secret would; new connections get it
// without a restart. It returns the certificate.
func (s *Server) Present(t testing.TB, c Certificate) *x509.Certificate {
	t.Helper()
	issuer, notBefore, notAfter := s.serverCA, time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	switch c {
	case Expired:
		notBefore, notAfter = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	case WrongCA:
		issuer = s.stranger
	}
	certPEM, keyPEM := issuer.issue(t, "eso-provider", true, notBefore, notAfter)
	// The server ignores a certificate and key that do not match yet, so
	// the order of the writes does not matter.
	writeFile(t, s.files.CertFile, certPEM)
	writeFile(t, s.files.KeyFile, keyPEM)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// PresentedCertificate is the certificate a new connection gets now.
func (s *Server) PresentedCertificate(t testing.TB) *x509.Certificate {
	t.Helper()
	conn, err := tls.Dial("tcp", s.addr, &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{s.probe},
		NextProtos:   []string{"h2"},
		// Only to look at what is presented, whatever it is.
		InsecureSkipVerify: true, //nolint:gosec
	})
	if err != nil {
		t.Fatalf("connecting to look at the server certificate: %v", err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

// ClientSecret is core's client certificate Secret for cn, as cert-manager
// writes it: signed by the CA the provider trusts, with the CA of the
// provider's Good certificates as ca.crt.
func (s *Server) ClientSecret(t testing.TB, namespace, name, cn string) *corev1.Secret {
	t.Helper()
	certPEM, keyPEM := s.clientCA.issue(t, cn, false, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       certPEM,
			corev1.TLSPrivateKeyKey: keyPEM,
			grpcclient.KeyCA:        s.serverCA.pem,
		},
	}
}

// writeFile replaces path in one step, as a Secret volume update does.
func writeFile(t testing.TB, path string, content []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, content, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
