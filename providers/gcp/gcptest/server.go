// Package gcptest serves the Secret Manager gRPC API from memory, for tests.
// No Secret Manager emulator exists; this lets the real
// cloud.google.com/go/secretmanager client run against a real gRPC server
// that speaks the real API (request and response messages, status codes).
package gcptest

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	smpb "cloud.google.com/go/secretmanager/apiv1/secretmanagerpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// Server is an in-memory Secret Manager.
type Server struct {
	smpb.UnimplementedSecretManagerServiceServer

	mu      sync.Mutex
	secrets map[string]*secret // by full name: projects/p/secrets/s
	// Calls counts requests by method name.
	Calls map[string]int
}

type secret struct {
	labels   map[string]string
	versions [][]byte
}

// Start serves on a loopback port until the test ends and returns the
// server and the client options that reach it.
func Start(t testing.TB) (*Server, []option.ClientOption) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{secrets: map[string]*secret{}, Calls: map[string]int{}}
	g := grpc.NewServer()
	smpb.RegisterSecretManagerServiceServer(g, s)
	go func() { _ = g.Serve(l) }()
	t.Cleanup(g.Stop)
	return s, []option.ClientOption{
		option.WithEndpoint(l.Addr().String()),
		option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
	}
}

// Add stores a new version of secret name (projects/p/secrets/s) with labels.
func (s *Server) Add(name string, payload []byte, labels map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, ok := s.secrets[name]
	if !ok {
		sec = &secret{labels: labels}
		s.secrets[name] = sec
	}
	sec.versions = append(sec.versions, payload)
}

func (s *Server) count(method string) {
	s.mu.Lock()
	s.Calls[method]++
	s.mu.Unlock()
}

// AccessSecretVersion implements the API: versions are 1-based numbers or "latest".
func (s *Server) AccessSecretVersion(_ context.Context, req *smpb.AccessSecretVersionRequest) (*smpb.AccessSecretVersionResponse, error) {
	s.count("AccessSecretVersion")
	i := strings.LastIndex(req.Name, "/versions/")
	if i < 0 {
		return nil, status.Error(codes.InvalidArgument, "malformed version name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, ok := s.secrets[req.Name[:i]]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "Secret [%s] not found or has no versions.", req.Name[:i])
	}
	v := req.Name[i+len("/versions/"):]
	n := len(sec.versions)
	if v != "latest" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > len(sec.versions) {
			return nil, status.Errorf(codes.NotFound, "Secret Version [%s] not found.", req.Name)
		}
	}
	return &smpb.AccessSecretVersionResponse{Name: fmt.Sprintf("%s/versions/%d", req.Name[:i], n),
		Payload: &smpb.SecretPayload{Data: sec.versions[n-1]}}, nil
}

// GetSecret implements the API.
func (s *Server) GetSecret(_ context.Context, req *smpb.GetSecretRequest) (*smpb.Secret, error) {
	s.count("GetSecret")
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, ok := s.secrets[req.Name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "Secret [%s] not found.", req.Name)
	}
	return &smpb.Secret{Name: req.Name, Labels: sec.labels}, nil
}

// ListSecrets implements the API with the filter form "labels.k=v AND ...".
func (s *Server) ListSecrets(_ context.Context, req *smpb.ListSecretsRequest) (*smpb.ListSecretsResponse, error) {
	s.count("ListSecrets")
	want := map[string]string{}
	if req.Filter != "" {
		for _, term := range strings.Split(req.Filter, " AND ") {
			k, v, ok := strings.Cut(strings.TrimPrefix(term, "labels."), "=")
			if !ok || !strings.HasPrefix(term, "labels.") {
				return nil, status.Errorf(codes.InvalidArgument, "unsupported filter %q", term)
			}
			want[k] = v
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res := &smpb.ListSecretsResponse{}
	for name, sec := range s.secrets {
		if !strings.HasPrefix(name, req.Parent+"/secrets/") {
			continue
		}
		match := true
		for k, v := range want {
			match = match && sec.labels[k] == v
		}
		if match {
			res.Secrets = append(res.Secrets, &smpb.Secret{Name: name, Labels: sec.labels})
		}
	}
	return res, nil
}
