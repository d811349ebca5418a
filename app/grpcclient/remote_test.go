package grpcclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/grpcclient/grpcclienttest"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/plugin/wire"
)

var (
	fakeRef   = plugin.Ref{Kind: "Fake", Name: "demo", Namespace: "team"}
	teamScope = plugin.Scope{Namespace: "team"}
)

// fixture is a provider process on loopback with mTLS, the client
// certificate Secret core uses for it, and a Remote.
type fixture struct {
	t        *testing.T
	server   *grpcclienttest.Server
	serverCA *grpcclienttest.CA
	clientCA *grpcclienttest.CA
	kube     client.Client
	remote   *Remote
	ep       Endpoint
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	f := &fixture{t: t, serverCA: grpcclienttest.NewCA(t, "server-ca"), clientCA: grpcclienttest.NewCA(t, "client-ca")}
	f.server = grpcclienttest.NewServer(grpcclienttest.ServerCredentials(t, f.serverCA, f.clientCA))
	f.server.Start(t)
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	f.kube = fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(grpcclienttest.ClientSecret(t, "team", "core-tls", "eso-core", f.clientCA, f.serverCA)).Build()
	if opts.CertificateTTL == 0 {
		opts.CertificateTTL = -1
	}
	f.remote = New(f.kube, opts)
	t.Cleanup(f.remote.Close)
	f.ep = f.endpoint(f.server.Addr())
	return f
}

func (f *fixture) endpoint(address string) Endpoint {
	f.t.Helper()
	ep, err := f.remote.Endpoint(address, &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: "core-tls"}}, "team", "team")
	if err != nil {
		f.t.Fatal(err)
	}
	return ep
}

func (f *fixture) client() plugin.SecretsClient {
	f.t.Helper()
	cl, err := f.remote.Provider(f.ep, "Fake").NewClient(context.Background(), fakeRef, teamScope)
	if err != nil {
		f.t.Fatalf("NewClient: %v", err)
	}
	f.t.Cleanup(func() { _ = cl.Close(context.Background()) })
	return cl
}

func TestReadsAndWrites(t *testing.T) {
	f := newFixture(t, Options{})
	f.server.Set("db", []byte(`{"user":"admin","password":"s3cret"}`))
	f.server.Set("token", []byte("t0ken"))
	ctx := context.Background()
	cl := f.client()

	if cl.Capabilities() != plugin.ReadWrite {
		t.Errorf("capabilities %s", cl.Capabilities())
	}
	if v, err := cl.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "token"}); err != nil || string(v) != "t0ken" {
		t.Errorf("GetSecret = %q, %v", v, err)
	}
	if v, err := cl.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "user"}); err != nil || string(v) != "admin" {
		t.Errorf("GetSecret property = %q, %v", v, err)
	}
	if m, err := cl.GetSecretMap(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"}); err != nil || string(m["password"]) != "s3cret" || len(m) != 2 {
		t.Errorf("GetSecretMap = %v, %v", m, err)
	}
	if m, err := cl.GetAllSecrets(ctx, esv1.ExternalSecretFind{Name: &esv1.FindName{RegExp: "^tok"}}); err != nil || len(m) != 1 || string(m["token"]) != "t0ken" {
		t.Errorf("GetAllSecrets = %v, %v", m, err)
	}

	w, ok := cl.(plugin.Writer)
	if !ok {
		t.Fatal("the remote client is no plugin.Writer")
	}
	if err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "pushed", Value: []byte("v1")}); err != nil {
		t.Fatalf("PushSecret: %v", err)
	}
	if v, _ := f.server.Get("pushed"); string(v) != "v1" {
		t.Errorf("pushed %q", v)
	}
	if ok, err := w.SecretExists(ctx, "pushed"); err != nil || !ok {
		t.Errorf("SecretExists = %v, %v", ok, err)
	}
	if err := w.DeleteSecret(ctx, "pushed", ""); err != nil {
		t.Fatalf("DeleteSecret: %v", err)
	}
	if ok, err := w.SecretExists(ctx, "pushed"); err != nil || ok {
		t.Errorf("SecretExists after delete = %v, %v", ok, err)
	}
	if err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "x", Property: "p", Value: []byte("v")}); !errors.Is(err, plugin.ErrNotSupported) {
		t.Errorf("an unsupported push arrived as %v", err)
	}
	if err := cl.(plugin.AuthChecker).CheckAuth(ctx); err != nil {
		t.Errorf("CheckAuth: %v", err)
	}
	if err := f.remote.Provider(f.ep, "Fake").Validate(ctx, fakeRef, teamScope); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if _, ok := cl.(plugin.JSONProperties); ok {
		t.Error("the remote client promises JSON properties it cannot know about")
	}

	// Every request names the configuration and the scope.
	for _, target := range f.server.Targets() {
		if target.GetKind() != "Fake" || target.GetName() != "demo" || target.GetNamespace() != "team" || target.GetCredentialsNamespace() != "team" {
			t.Fatalf("a request went with target %v", target)
		}
	}
	if clients := f.server.Clients(); len(clients) == 0 || clients[0] != "eso-core" {
		t.Errorf("the server saw client certificates %v", clients)
	}
}

func TestNotFoundArrivesAsContractError(t *testing.T) {
	f := newFixture(t, Options{})
	f.server.Set("db", []byte(`{"user":"admin"}`))
	cl := f.client()
	_, err := cl.GetSecret(context.Background(), esv1.ExternalSecretDataRemoteRef{Key: "missing"})
	if !errors.Is(err, plugin.ErrSecretNotFound) {
		t.Errorf("a missing secret arrived as %v", err)
	}
	_, err = cl.GetSecret(context.Background(), esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "nope"})
	if !errors.Is(err, plugin.ErrPropertyNotFound) || errors.Is(err, plugin.ErrSecretNotFound) {
		t.Errorf("a missing property arrived as %v", err)
	}
	f.server.FailNext("CheckAuth", fmt.Errorf("%w: token expired", plugin.ErrAuthFailed))
	if err := cl.(plugin.AuthChecker).CheckAuth(context.Background()); !errors.Is(err, plugin.ErrAuthFailed) {
		t.Errorf("a refused login arrived as %v", err)
	}
}

func TestIncompatibleServerRefused(t *testing.T) {
	f := newFixture(t, Options{})
	f.server.Majors = []uint32{wire.ProtocolMajor + 1}
	_, err := f.remote.Provider(f.ep, "Fake").NewClient(context.Background(), fakeRef, teamScope)
	if !errors.Is(err, ErrIncompatibleProvider) {
		t.Fatalf("a server of another major was accepted: %v", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprint(wire.ProtocolMajor+1)) || !strings.Contains(err.Error(), "speaks") {
		t.Errorf("the error does not say which majors: %v", err)
	}
	if f.server.Calls("Capabilities") != 0 {
		t.Error("core called an incompatible server")
	}
}

// TestReplacedByAnotherVersionAtTheSameAddress: the provider process is
// replaced by one of another protocol major at the same address; the
// reconnect is handshaken again, calls fail with ErrIncompatibleProvider
// instead of going on against a server core cannot trust to understand
// them, and a new client dials afresh (and is refused the same way).
func TestReplacedByAnotherVersionAtTheSameAddress(t *testing.T) {
	f := newFixture(t, Options{Backoff: time.Millisecond})
	f.server.Set("k", []byte("v"))
	cl := f.client()
	ctx := context.Background()
	if _, err := cl.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "k"}); err != nil {
		t.Fatal(err)
	}
	f.server.Stop()
	f.server.Majors = []uint32{wire.ProtocolMajor + 1}
	f.server.Start(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := cl.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "k"})
		if errors.Is(err, ErrIncompatibleProvider) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("calls through a replaced, incompatible provider process: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := f.remote.Provider(f.ep, "Fake").NewClient(ctx, fakeRef, teamScope); !errors.Is(err, ErrIncompatibleProvider) {
		t.Fatalf("a new client after the replacement: %v", err)
	}
}

func TestKindNotServedRefused(t *testing.T) {
	f := newFixture(t, Options{})
	err := f.remote.Provider(f.ep, "Vault").Validate(context.Background(), plugin.Ref{Kind: "Vault", Name: "v", Namespace: "team"}, teamScope)
	if !errors.Is(err, ErrKindNotServed) || !strings.Contains(err.Error(), "Vault") || !strings.Contains(err.Error(), "Fake") {
		t.Fatalf("a kind the server does not serve: %v", err)
	}
	if _, _, err := f.remote.Generator(f.ep, "Fake").Generate(context.Background(), fakeRef, teamScope); !errors.Is(err, ErrKindNotServed) {
		t.Fatalf("a provider kind used as a generator: %v", err)
	}
}

func TestRetriesUnavailableThenSucceeds(t *testing.T) {
	f := newFixture(t, Options{Backoff: time.Millisecond})
	f.server.Set("k", []byte("v"))
	cl := f.client()
	unavailable := status.Error(codes.Unavailable, "overloaded")
	f.server.FailNext("GetSecret", unavailable, unavailable)
	v, err := cl.GetSecret(context.Background(), esv1.ExternalSecretDataRemoteRef{Key: "k"})
	if err != nil || string(v) != "v" {
		t.Fatalf("GetSecret = %q, %v", v, err)
	}
	if n := f.server.Calls("GetSecret"); n != 3 {
		t.Errorf("%d calls, want 3", n)
	}

	// The cap: three attempts in all, then the error.
	f.server.FailNext("GetSecret", unavailable, unavailable, unavailable, unavailable)
	if _, err := cl.GetSecret(context.Background(), esv1.ExternalSecretDataRemoteRef{Key: "k"}); !errors.Is(err, wire.ErrUnavailable) {
		t.Fatalf("after the last attempt: %v", err)
	}
	if n := f.server.Calls("GetSecret"); n != 6 {
		t.Errorf("%d calls, want 6", n)
	}
}

func TestNoRetryOnNotFound(t *testing.T) {
	f := newFixture(t, Options{Backoff: time.Millisecond})
	cl := f.client()
	if _, err := cl.GetSecret(context.Background(), esv1.ExternalSecretDataRemoteRef{Key: "missing"}); !errors.Is(err, plugin.ErrSecretNotFound) {
		t.Fatal(err)
	}
	if n := f.server.Calls("GetSecret"); n != 1 {
		t.Errorf("a not-found was tried %d times", n)
	}
}

func TestGenerateIsNeverRetried(t *testing.T) {
	f := newFixture(t, Options{Backoff: time.Millisecond})
	g := f.remote.Generator(f.ep, "Password")
	ref := plugin.Ref{Kind: "Password", Name: "pw", Namespace: "team"}
	f.server.FailNext("Generate", status.Error(codes.Unavailable, "overloaded"))
	if _, _, err := g.Generate(context.Background(), ref, teamScope); !errors.Is(err, wire.ErrUnavailable) {
		t.Fatalf("Generate: %v", err)
	}
	data, state, err := g.Generate(context.Background(), ref, teamScope)
	if err != nil || string(data["password"]) != "generated-1" || string(state) != `{"n":1}` {
		t.Fatalf("Generate = %q, %s, %v", data, state, err)
	}
	if n := f.server.Calls("Generate"); n != 2 {
		t.Errorf("%d Generate calls, want 2", n)
	}
	if err := g.Cleanup(context.Background(), ref, teamScope, state); err != nil {
		t.Fatal(err)
	}
	if err := g.Validate(context.Background(), ref, teamScope); err != nil {
		t.Fatal(err)
	}
	if cleaned := f.server.Cleaned(); len(cleaned) != 1 || string(cleaned[0]) != `{"n":1}` {
		t.Errorf("cleaned %q", cleaned)
	}
}

func TestDeadlineExceededIsUnavailable(t *testing.T) {
	f := newFixture(t, Options{CallTimeout: 200 * time.Millisecond})
	cl := f.client()
	f.server.Delay(2 * time.Second)
	start := time.Now()
	_, err := cl.GetSecret(context.Background(), esv1.ExternalSecretDataRemoteRef{Key: "k"})
	if !errors.Is(err, wire.ErrUnavailable) {
		t.Fatalf("a call past its deadline: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the call took %s", d)
	}
	if n := f.server.Calls("GetSecret"); n != 1 {
		t.Errorf("a deadline was retried: %d calls", n)
	}
}

func TestServerCertificateFromAnotherCARefused(t *testing.T) {
	f := newFixture(t, Options{Attempts: 1})
	impostorCA := grpcclienttest.NewCA(t, "impostor-ca")
	impostor := grpcclienttest.NewServer(grpcclienttest.ServerCredentials(t, impostorCA, f.clientCA))
	impostor.Start(t)
	_, err := f.remote.Provider(f.endpoint(impostor.Addr()), "Fake").NewClient(context.Background(), fakeRef, teamScope)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a server certificate of another CA was accepted: %v", err)
	}
	if impostor.Calls("Handshake") != 0 {
		t.Error("core talked to the impostor")
	}
}

func TestClientCertificateRequired(t *testing.T) {
	f := newFixture(t, Options{})
	if _, err := f.remote.Endpoint(f.server.Addr(), nil, "team", "team"); !errors.Is(err, ErrPlaintextRefused) {
		t.Fatalf("an endpoint without client certificate: %v", err)
	}
	// A server that requires client certificates refuses a plaintext core,
	// and a plaintext core must be asked for.
	plain := New(f.kube, Options{Insecure: true, Attempts: 1})
	t.Cleanup(plain.Close)
	ep, err := plain.Endpoint(f.server.Addr(), nil, "team", "team")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Provider(ep, "Fake").NewClient(context.Background(), fakeRef, teamScope); err == nil {
		t.Fatal("a plaintext client got through to an mTLS server")
	}

	_, err = f.remote.Endpoint(f.server.Addr(), &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: "core-tls", Namespace: "other"}}, "team", "team")
	if !errors.Is(err, ErrCertificateNamespace) {
		t.Errorf("a SecretStore naming another namespace's Secret: %v", err)
	}
	ep, err = f.remote.Endpoint(f.server.Addr(), &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: "core-tls"}}, "", "team")
	if err != nil || *ep.Certificate != (types.NamespacedName{Namespace: "team", Name: "core-tls"}) {
		t.Errorf("a cluster store's Secret defaults to the configuration's namespace: %v, %v", ep, err)
	}
	missing := f.endpoint(f.server.Addr())
	missing.Certificate = &types.NamespacedName{Namespace: "team", Name: "nope"}
	if err := f.remote.Provider(missing, "Fake").Validate(context.Background(), fakeRef, teamScope); !errors.Is(err, plugin.ErrInvalidConfig) {
		t.Errorf("a missing certificate Secret: %v", err)
	}
}

func TestPlaintextWhenInsecure(t *testing.T) {
	server := grpcclienttest.NewServer(nil)
	server.Start(t)
	remote := New(nil, Options{Insecure: true})
	t.Cleanup(remote.Close)
	ep, err := remote.Endpoint(server.Addr(), nil, "team", "team")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Provider(ep, "Fake").Validate(context.Background(), fakeRef, teamScope); err != nil {
		t.Fatal(err)
	}
}

func TestClientCertificateRotation(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	prov := f.remote.Provider(f.ep, "Fake")
	if err := prov.Validate(ctx, fakeRef, teamScope); err != nil {
		t.Fatal(err)
	}
	before, err := f.remote.CertificateVersion(ctx, f.ep)
	if err != nil {
		t.Fatal(err)
	}
	old := f.client() // a client built before the rotation keeps working

	rotated := grpcclienttest.ClientSecret(t, "team", "core-tls", "eso-core-rotated", f.clientCA, f.serverCA)
	var current corev1.Secret
	if err := f.kube.Get(ctx, types.NamespacedName{Namespace: "team", Name: "core-tls"}, &current); err != nil {
		t.Fatal(err)
	}
	current.Data = rotated.Data
	if err := f.kube.Update(ctx, &current); err != nil {
		t.Fatal(err)
	}
	after, err := f.remote.CertificateVersion(ctx, f.ep)
	if err != nil || after == before {
		t.Fatalf("the certificate version did not change: %q -> %q, %v", before, after, err)
	}
	if err := prov.Validate(ctx, fakeRef, teamScope); err != nil {
		t.Fatal(err)
	}
	clients := f.server.Clients()
	if last := clients[len(clients)-1]; last != "eso-core-rotated" {
		t.Fatalf("the call after the rotation came with %s", last)
	}
	if f.remote.pool.open() != 1 {
		t.Errorf("%d connections open, want only the new one", f.remote.pool.open())
	}
	if _, err := old.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "missing"}); !errors.Is(err, plugin.ErrSecretNotFound) {
		t.Errorf("a client of the old certificate: %v", err)
	}
}

// TestCertificateMetadataEditKeepsTheConnection: labels and annotations on
// the certificate Secret (cert-manager writes some) are not a rotation.
func TestCertificateMetadataEditKeepsTheConnection(t *testing.T) {
	f := newFixture(t, Options{})
	f.client()
	var s corev1.Secret
	if err := f.kube.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "core-tls"}, &s); err != nil {
		t.Fatal(err)
	}
	s.Annotations = map[string]string{"cert-manager.io/certificate-name": "core"}
	if err := f.kube.Update(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	f.client()
	if f.server.Calls("Handshake") != 1 || f.remote.pool.open() != 1 {
		t.Fatalf("an annotation made %d handshakes and %d connections", f.server.Calls("Handshake"), f.remote.pool.open())
	}
}

func TestConnectionsSharedAndClosedWhenIdle(t *testing.T) {
	f := newFixture(t, Options{IdleTimeout: 100 * time.Millisecond})
	a, b := f.client(), f.client()
	if f.server.Calls("Handshake") != 1 || f.remote.pool.open() != 1 {
		t.Fatalf("two clients made %d handshakes and %d connections", f.server.Calls("Handshake"), f.remote.pool.open())
	}
	_ = a.Close(context.Background())
	_ = b.Close(context.Background())
	deadline := time.Now().Add(5 * time.Second)
	for f.remote.pool.open() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("an idle connection stayed open")
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.client()
	if f.server.Calls("Handshake") != 2 {
		t.Errorf("a new connection after idling made %d handshakes in all", f.server.Calls("Handshake"))
	}
}

// TestTLSMismatchIsNamed: a plaintext connection to an mTLS provider
// process, and a TLS one to a plaintext process, say that TLS is what
// differs, not only that the provider is unavailable.
func TestTLSMismatchIsNamed(t *testing.T) {
	f := newFixture(t, Options{Insecure: true, Attempts: 1})
	plain, err := f.remote.Endpoint(f.server.Addr(), nil, "team", "team")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.remote.Provider(plain, "Fake").NewClient(context.Background(), fakeRef, teamScope)
	if !errors.Is(err, wire.ErrUnavailable) || !strings.Contains(err.Error(), "probably serves mTLS") {
		t.Errorf("plaintext to an mTLS server: %v", err)
	}

	plainServer := grpcclienttest.NewServer(insecure.NewCredentials())
	plainServer.Start(t)
	_, err = f.remote.Provider(f.endpoint(plainServer.Addr()), "Fake").NewClient(context.Background(), fakeRef, teamScope)
	if !errors.Is(err, wire.ErrUnavailable) || !strings.Contains(err.Error(), "serves plaintext") {
		t.Errorf("TLS to a plaintext server: %v", err)
	}
}
