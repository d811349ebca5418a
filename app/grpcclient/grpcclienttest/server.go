// Package grpcclienttest is a provider process for tests of core's remote
// adapter: secrets in a map served over the protocol's generated stubs,
// with failures and delays on demand, and the certificates mTLS needs.
package grpcclienttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/peer"

	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/plugin/wire"
)

// Server serves secrets from a map. Its fields may be set before Start.
type Server struct {
	// Majors are the protocol majors it claims; default wire.ProtocolMajor.
	Majors []uint32
	// ProviderKinds and GeneratorKinds it serves; default Fake and Password.
	ProviderKinds, GeneratorKinds []string

	creds credentials.TransportCredentials
	addr  string

	mu       sync.Mutex
	srv      *grpc.Server
	secrets  map[string][]byte
	failures map[string][]error
	delay    time.Duration
	calls    map[string]int
	targets  []*providerv1.Target
	clients  []string
	cleaned  [][]byte
	counter  int
}

// NewServer returns a server with creds (nil: plaintext).
func NewServer(creds credentials.TransportCredentials) *Server {
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	return &Server{creds: creds, secrets: map[string][]byte{}, failures: map[string][]error{}, calls: map[string]int{},
		Majors: []uint32{wire.ProtocolMajor}, ProviderKinds: []string{"Fake"}, GeneratorKinds: []string{"Password"}}
}

// Start serves on a loopback port (the same one again after Stop) until the
// test ends.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	addr := s.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var lis net.Listener
	var err error
	// A port just closed may take a moment to be free again.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if lis, err = net.Listen("tcp", addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	s.addr = lis.Addr().String()
	srv := grpc.NewServer(grpc.Creds(s.creds), grpc.UnaryInterceptor(s.intercept))
	providerv1.RegisterInfoServer(srv, info{s: s})
	providerv1.RegisterSecretStoreProviderServer(srv, store{s: s})
	providerv1.RegisterGeneratorProviderServer(srv, gen{s: s})
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(s.Stop)
}

// Stop stops serving and drops every connection.
func (s *Server) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Stop()
	}
}

// Addr is where the server listens.
func (s *Server) Addr() string { return s.addr }

// Set stores a secret.
func (s *Server) Set(key string, value []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets[key] = value
}

// Get returns a secret and whether it exists.
func (s *Server) Get(key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.secrets[key]
	return v, ok
}

// FailNext makes the next calls of method (e.g. "GetSecret") fail with errs,
// one each, as statuses (wire.ToStatus).
func (s *Server) FailNext(method string, errs ...error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[method] = append(s.failures[method], errs...)
}

// Delay makes every call take d.
func (s *Server) Delay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Calls counts the calls of method, failed ones included.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Targets are the targets of every call made, in order.
func (s *Server) Targets() []*providerv1.Target {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*providerv1.Target(nil), s.targets...)
}

// Clients are the client certificate names calls came with, in order.
func (s *Server) Clients() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.clients...)
}

// Cleaned are the states Cleanup was called with.
func (s *Server) Cleaned() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.cleaned...)
}

type targeted interface{ GetTarget() *providerv1.Target }

func (s *Server) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	method := methodName(info.FullMethod)
	s.mu.Lock()
	s.calls[method]++
	if r, ok := req.(targeted); ok {
		s.targets = append(s.targets, r.GetTarget())
	}
	if p, ok := peer.FromContext(ctx); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(ti.State.PeerCertificates) > 0 {
			s.clients = append(s.clients, ti.State.PeerCertificates[0].Subject.CommonName)
		}
	}
	var fail error
	if errs := s.failures[method]; len(errs) > 0 {
		fail, s.failures[method] = errs[0], errs[1:]
	}
	delay := s.delay
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, wire.ToStatus(ctx.Err())
		}
	}
	if fail != nil {
		return nil, wire.ToStatus(fail)
	}
	resp, err := handler(ctx, req)
	return resp, wire.ToStatus(err)
}

func methodName(full string) string {
	for i := len(full) - 1; i >= 0; i-- {
		if full[i] == '/' {
			return full[i+1:]
		}
	}
	return full
}

type info struct {
	providerv1.UnimplementedInfoServer
	s *Server
}

func (i info) Handshake(context.Context, *providerv1.HandshakeRequest) (*providerv1.HandshakeResponse, error) {
	return &providerv1.HandshakeResponse{ProtocolMajors: i.s.Majors, ServerVersion: "test",
		ProviderKinds: i.s.ProviderKinds, GeneratorKinds: i.s.GeneratorKinds}, nil
}

type store struct {
	providerv1.UnimplementedSecretStoreProviderServer
	s *Server
}

func (st store) value(ref *providerv1.RemoteRef) ([]byte, error) {
	st.s.mu.Lock()
	v, ok := st.s.secrets[ref.GetKey()]
	st.s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q", plugin.ErrSecretNotFound, ref.GetKey())
	}
	return v, nil
}

func (st store) fields(ref *providerv1.RemoteRef) (map[string][]byte, error) {
	v, err := st.value(ref)
	if err != nil {
		return nil, err
	}
	var m map[string]string
	if json.Unmarshal(v, &m) != nil {
		return nil, fmt.Errorf("%w: %q is not a JSON object", plugin.ErrPropertyNotFound, ref.GetKey())
	}
	out := map[string][]byte{}
	for k, f := range m {
		out[k] = []byte(f)
	}
	return out, nil
}

func (st store) GetSecret(_ context.Context, req *providerv1.GetSecretRequest) (*providerv1.GetSecretResponse, error) {
	if req.GetRef().GetProperty() == "" {
		v, err := st.value(req.GetRef())
		return &providerv1.GetSecretResponse{Value: v}, err
	}
	m, err := st.fields(req.GetRef())
	if err != nil {
		return nil, err
	}
	v, ok := m[req.GetRef().GetProperty()]
	if !ok {
		return nil, fmt.Errorf("%w: %q has no %q", plugin.ErrPropertyNotFound, req.GetRef().GetKey(), req.GetRef().GetProperty())
	}
	return &providerv1.GetSecretResponse{Value: v}, nil
}

func (st store) GetSecretMap(_ context.Context, req *providerv1.GetSecretRequest) (*providerv1.SecretMapResponse, error) {
	m, err := st.fields(req.GetRef())
	return &providerv1.SecretMapResponse{Data: m}, err
}

func (st store) GetAllSecrets(_ context.Context, req *providerv1.GetAllSecretsRequest) (*providerv1.SecretMapResponse, error) {
	re, err := regexp.Compile(req.GetFind().GetNameRegexp())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", plugin.ErrInvalidConfig, err)
	}
	st.s.mu.Lock()
	defer st.s.mu.Unlock()
	out := map[string][]byte{}
	for k, v := range st.s.secrets {
		if re.MatchString(k) {
			out[k] = v
		}
	}
	return &providerv1.SecretMapResponse{Data: out}, nil
}

func (st store) PushSecret(_ context.Context, req *providerv1.PushSecretRequest) (*providerv1.PushSecretResponse, error) {
	if req.GetProperty() != "" {
		return nil, fmt.Errorf("%w: properties", plugin.ErrNotSupported)
	}
	st.s.Set(req.GetRemoteKey(), req.GetValue())
	return &providerv1.PushSecretResponse{}, nil
}

func (st store) DeleteSecret(_ context.Context, req *providerv1.DeleteSecretRequest) (*providerv1.DeleteSecretResponse, error) {
	st.s.mu.Lock()
	defer st.s.mu.Unlock()
	delete(st.s.secrets, req.GetRemoteKey())
	return &providerv1.DeleteSecretResponse{}, nil
}

func (st store) SecretExists(_ context.Context, req *providerv1.SecretExistsRequest) (*providerv1.SecretExistsResponse, error) {
	_, ok := st.s.Get(req.GetRemoteKey())
	return &providerv1.SecretExistsResponse{Exists: ok}, nil
}

func (store) Validate(context.Context, *providerv1.ValidateRequest) (*providerv1.ValidateResponse, error) {
	return &providerv1.ValidateResponse{}, nil
}

func (store) Capabilities(context.Context, *providerv1.CapabilitiesRequest) (*providerv1.CapabilitiesResponse, error) {
	return &providerv1.CapabilitiesResponse{Capabilities: string(plugin.ReadWrite)}, nil
}

func (store) CheckAuth(context.Context, *providerv1.CheckAuthRequest) (*providerv1.CheckAuthResponse, error) {
	return &providerv1.CheckAuthResponse{}, nil
}

type gen struct {
	providerv1.UnimplementedGeneratorProviderServer
	s *Server
}

// Generate returns a new counter value, and the counter as its state.
func (g gen) Generate(context.Context, *providerv1.GenerateRequest) (*providerv1.GenerateResponse, error) {
	g.s.mu.Lock()
	defer g.s.mu.Unlock()
	g.s.counter++
	n := strconv.Itoa(g.s.counter)
	return &providerv1.GenerateResponse{Data: map[string][]byte{"password": []byte("generated-" + n)}, State: []byte(`{"n":` + n + `}`)}, nil
}

func (g gen) Cleanup(_ context.Context, req *providerv1.CleanupRequest) (*providerv1.CleanupResponse, error) {
	g.s.mu.Lock()
	defer g.s.mu.Unlock()
	g.s.cleaned = append(g.s.cleaned, req.GetState())
	return &providerv1.CleanupResponse{}, nil
}

func (gen) ValidateGenerator(context.Context, *providerv1.ValidateRequest) (*providerv1.ValidateResponse, error) {
	return &providerv1.ValidateResponse{}, nil
}
