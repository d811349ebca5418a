// Package gcptest serves the Secret Manager gRPC API from memory, for tests.
// No Secret Manager emulator exists; this lets the real
// cloud.google.com/go/secretmanager client run against a real gRPC server
// that speaks the real API (request and response messages, status codes).
// The server can require bearer tokens (issued by TokenEndpoint or by a
// test) and fail calls on demand, to test authentication and faults.
package gcptest

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	smpb "cloud.google.com/go/secretmanager/apiv1/secretmanagerpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Server is an in-memory Secret Manager.
type Server struct {
	smpb.UnimplementedSecretManagerServiceServer

	// Addr is the host:port the server listens on.
	Addr string

	mu      sync.Mutex
	secrets map[string]*secret // by full name: projects/p/secrets/s
	calls   map[string]int
	// tokens are the accepted bearer tokens, required once requireAuth is set.
	tokens         map[string]bool
	requireAuth    bool
	authorizations []string
	failures       int
	failCode       codes.Code
	hooks          map[string]func()
	etags          int
}

type secret struct {
	labels      map[string]string
	annotations map[string]string
	replication *smpb.Replication
	versions    []*version
	etag        string
}

type version struct {
	data     []byte
	disabled bool
}

// Start serves on a loopback port until the test ends and returns the
// server and the client options that reach it without credentials.
func Start(t testing.TB) (*Server, []option.ClientOption) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: l.Addr().String(), secrets: map[string]*secret{}, calls: map[string]int{},
		tokens: map[string]bool{}, hooks: map[string]func(){}}
	g := grpc.NewServer(grpc.UnaryInterceptor(s.intercept))
	smpb.RegisterSecretManagerServiceServer(g, s)
	go func() { _ = g.Serve(l) }()
	t.Cleanup(g.Stop)
	return s, append(s.Transport(), option.WithoutAuthentication())
}

// Transport returns the client options that reach the server over plaintext,
// leaving credentials to the caller: the server has no TLS.
func (s *Server) Transport() []option.ClientOption {
	return []option.ClientOption{option.WithEndpoint(s.Addr), Insecure()}
}

// Insecure is the client option for a plaintext connection.
func Insecure() option.ClientOption {
	return option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials()))
}

// intercept counts calls, records the authorization metadata, checks bearer
// tokens and injects failures before any method runs.
func (s *Server) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	method := info.FullMethod[strings.LastIndex(info.FullMethod, "/")+1:]
	md, _ := metadata.FromIncomingContext(ctx)
	authorization := strings.Join(md.Get("authorization"), ",")
	s.mu.Lock()
	s.calls[method]++
	s.authorizations = append(s.authorizations, authorization)
	hook := s.hooks[method]
	delete(s.hooks, method)
	var err error
	switch {
	case s.failures > 0:
		s.failures--
		err = status.Errorf(s.failCode, "injected failure of %s", method)
	case s.requireAuth && !s.tokens[strings.TrimPrefix(authorization, "Bearer ")]:
		err = status.Error(codes.Unauthenticated, "Request had invalid authentication credentials. Expected OAuth 2 access token.")
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if hook != nil {
		hook()
	}
	return handler(ctx, req)
}

// FailNext makes the next n calls fail with code.
func (s *Server) FailNext(n int, code codes.Code) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures, s.failCode = n, code
}

// AcceptToken makes the server require a bearer token on every call, token
// being one it accepts.
func (s *Server) AcceptToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = true
	s.requireAuth = true
}

// RevokeToken stops accepting token.
func (s *Server) RevokeToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tokens, token)
}

// Authorizations returns the authorization metadata of every call so far.
func (s *Server) Authorizations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.authorizations)
}

// CallCount returns how many calls of method (e.g. "AddSecretVersion") the
// server received.
func (s *Server) CallCount(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// BeforeNext runs f once, just before the next call of method is served: a
// change made by someone else between two calls of a client.
func (s *Server) BeforeNext(method string, f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks[method] = f
}

// Add stores a new version of secret name (projects/p/secrets/s), creating
// the secret with labels if needed.
func (s *Server) Add(name string, payload []byte, labels map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, ok := s.secrets[name]
	if !ok {
		sec = &secret{labels: labels, etag: s.nextEtag()}
		if !strings.Contains(name, "/locations/") {
			sec.replication = &smpb.Replication{Replication: &smpb.Replication_Automatic_{Automatic: &smpb.Replication_Automatic{}}}
		}
		s.secrets[name] = sec
	}
	sec.versions = append(sec.versions, &version{data: payload})
}

// SetLabels replaces the labels of secret name, as an update by someone else
// would (the etag changes).
func (s *Server) SetLabels(name string, labels map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sec, ok := s.secrets[name]; ok {
		sec.labels, sec.etag = labels, s.nextEtag()
	}
}

// Disable disables version n (1-based) of secret name.
func (s *Server) Disable(name string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sec, ok := s.secrets[name]; ok && n >= 1 && n <= len(sec.versions) {
		sec.versions[n-1].disabled = true
	}
}

// Latest returns the payload of the newest version of secret name and how
// many versions it has; ok is false when the secret does not exist.
func (s *Server) Latest(name string) (payload []byte, versions int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, ok := s.secrets[name]
	if !ok || len(sec.versions) == 0 {
		return nil, 0, ok
	}
	return sec.versions[len(sec.versions)-1].data, len(sec.versions), true
}

// Secret returns the stored secret name as the API would.
func (s *Server) Secret(name string) (*smpb.Secret, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, ok := s.secrets[name]
	if !ok {
		return nil, false
	}
	return sec.proto(name), true
}

func (s *Server) nextEtag() string {
	s.etags++
	return fmt.Sprintf("%q", strconv.Itoa(s.etags))
}

func (sec *secret) proto(name string) *smpb.Secret {
	return &smpb.Secret{Name: name, Labels: sec.labels, Annotations: sec.annotations, Replication: sec.replication, Etag: sec.etag}
}

func (sec *secret) versionProto(name string, n int) *smpb.SecretVersion {
	state := smpb.SecretVersion_ENABLED
	if sec.versions[n-1].disabled {
		state = smpb.SecretVersion_DISABLED
	}
	return &smpb.SecretVersion{Name: fmt.Sprintf("%s/versions/%d", name, n), State: state, CreateTime: timestamppb.Now()}
}

// AccessSecretVersion implements the API: versions are 1-based numbers or
// "latest", the newest version; a disabled version cannot be accessed.
func (s *Server) AccessSecretVersion(_ context.Context, req *smpb.AccessSecretVersionRequest) (*smpb.AccessSecretVersionResponse, error) {
	i := strings.LastIndex(req.Name, "/versions/")
	if i < 0 {
		return nil, status.Error(codes.InvalidArgument, "malformed version name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, ok := s.secrets[req.Name[:i]]
	if !ok || len(sec.versions) == 0 {
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
	name := fmt.Sprintf("%s/versions/%d", req.Name[:i], n)
	if sec.versions[n-1].disabled {
		return nil, status.Errorf(codes.FailedPrecondition, "Secret Version [%s] is in DISABLED state.", name)
	}
	return &smpb.AccessSecretVersionResponse{Name: name, Payload: &smpb.SecretPayload{Data: sec.versions[n-1].data}}, nil
}

// secret is the secret named name, or the API's NotFound; s.mu is held.
func (s *Server) secret(name string) (*secret, error) {
	sec, ok := s.secrets[name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "Secret [%s] not found.", name)
	}
	return sec, nil
}

// GetSecret implements the API.
func (s *Server) GetSecret(_ context.Context, req *smpb.GetSecretRequest) (*smpb.Secret, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, err := s.secret(req.Name)
	if err != nil {
		return nil, err
	}
	return sec.proto(req.Name), nil
}

var secretID = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,255}$`)

// CreateSecret implements the API: global secrets (parent projects/p) need a
// replication policy, regional ones (projects/p/locations/l) must not have one.
func (s *Server) CreateSecret(_ context.Context, req *smpb.CreateSecretRequest) (*smpb.Secret, error) {
	if !secretID.MatchString(req.SecretId) {
		return nil, status.Errorf(codes.InvalidArgument, "invalid secret id %q", req.SecretId)
	}
	regional := strings.Contains(req.Parent, "/locations/")
	switch {
	case req.Secret == nil:
		return nil, status.Error(codes.InvalidArgument, "secret is required")
	case !regional && req.Secret.Replication == nil:
		return nil, status.Error(codes.InvalidArgument, "Secret.replication is required.")
	case regional && req.Secret.Replication != nil:
		return nil, status.Error(codes.InvalidArgument, "Regional secrets do not take a replication policy.")
	}
	name := req.Parent + "/secrets/" + req.SecretId
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.secrets[name]; ok {
		return nil, status.Errorf(codes.AlreadyExists, "Secret [%s] already exists.", name)
	}
	sec := &secret{labels: req.Secret.Labels, annotations: req.Secret.Annotations, replication: req.Secret.Replication, etag: s.nextEtag()}
	s.secrets[name] = sec
	return sec.proto(name), nil
}

// AddSecretVersion implements the API.
func (s *Server) AddSecretVersion(_ context.Context, req *smpb.AddSecretVersionRequest) (*smpb.SecretVersion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, err := s.secret(req.Parent)
	if err != nil {
		return nil, err
	}
	sec.versions = append(sec.versions, &version{data: req.GetPayload().GetData()})
	return sec.versionProto(req.Parent, len(sec.versions)), nil
}

// DeleteSecret implements the API: with an etag, only if the secret is
// still as the caller last saw it.
func (s *Server) DeleteSecret(_ context.Context, req *smpb.DeleteSecretRequest) (*emptypb.Empty, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, err := s.secret(req.Name)
	if err != nil {
		return nil, err
	}
	if req.Etag != "" && req.Etag != sec.etag {
		return nil, status.Errorf(codes.FailedPrecondition, "The etag provided in the request does not match the etag of Secret [%s].", req.Name)
	}
	delete(s.secrets, req.Name)
	return &emptypb.Empty{}, nil
}

// UpdateSecret implements the API for the update mask paths "labels" and
// "annotations": with an etag, only if the secret is still as the caller
// last saw it.
func (s *Server) UpdateSecret(_ context.Context, req *smpb.UpdateSecretRequest) (*smpb.Secret, error) {
	paths := req.GetUpdateMask().GetPaths()
	for _, p := range paths {
		if p != "labels" && p != "annotations" {
			return nil, status.Errorf(codes.InvalidArgument, "unsupported update mask %v", paths)
		}
	}
	if len(paths) == 0 {
		return nil, status.Error(codes.InvalidArgument, "an update mask is required")
	}
	name := req.GetSecret().GetName()
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, ok := s.secrets[name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "Secret [%s] not found.", name)
	}
	if e := req.GetSecret().GetEtag(); e != "" && e != sec.etag {
		return nil, status.Errorf(codes.FailedPrecondition, "The etag provided in the request does not match the etag of Secret [%s].", name)
	}
	for _, p := range paths {
		switch p {
		case "labels":
			sec.labels = req.GetSecret().GetLabels()
		case "annotations":
			sec.annotations = req.GetSecret().GetAnnotations()
		}
	}
	sec.etag = s.nextEtag()
	return sec.proto(name), nil
}

// ListSecretVersions implements the API, newest first, with the filter
// forms "" and "state:ENABLED".
func (s *Server) ListSecretVersions(_ context.Context, req *smpb.ListSecretVersionsRequest) (*smpb.ListSecretVersionsResponse, error) {
	if req.Filter != "" && req.Filter != "state:ENABLED" {
		return nil, status.Errorf(codes.InvalidArgument, "unsupported filter %q", req.Filter)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, err := s.secret(req.Parent)
	if err != nil {
		return nil, err
	}
	res := &smpb.ListSecretVersionsResponse{}
	for n := len(sec.versions); n >= 1; n-- {
		if req.Filter == "" || !sec.versions[n-1].disabled {
			res.Versions = append(res.Versions, sec.versionProto(req.Parent, n))
		}
	}
	res.TotalSize = int32(len(res.Versions))
	return res, nil
}

// ListSecrets implements the API with the filter form "labels.k=v AND ...".
func (s *Server) ListSecrets(_ context.Context, req *smpb.ListSecretsRequest) (*smpb.ListSecretsResponse, error) {
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
			res.Secrets = append(res.Secrets, sec.proto(name))
		}
	}
	return res, nil
}
