package server

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/generators/password"
	"github.com/eso-dev/eso/generators/uuid"
	fakeprovider "github.com/eso-dev/eso/providers/fake"
	"github.com/eso-dev/eso/providers/kubernetes"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/plugin/pluginmetrics"
	"github.com/eso-dev/eso/providers/plugin/wire"
)

// loopback is a provider-mode server on a loopback port, reached over mTLS
// with the generated stubs, as core reaches it.
type loopback struct {
	server     *Server
	endpoint   *Endpoint
	kube       client.Client
	conn       *grpc.ClientConn
	stores     providerv1.SecretStoreProviderClient
	generators providerv1.GeneratorProviderClient
	info       providerv1.InfoClient
	metrics    *Metrics
	plugins    *plugin.Plugins
	// reads counts what the server read from the API server.
	reads *countingReader
	// addr, serverCA and clientCA let a test dial as another caller.
	addr               string
	serverCA, clientCA *testCA
}

// countingReader counts the reads made through a client.
type countingReader struct {
	client.Client
	n atomic.Int64
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.n.Add(1)
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.n.Add(1)
	return c.Client.List(ctx, list, opts...)
}

func startLoopback(t *testing.T, kinds ...string) *loopback {
	t.Helper()
	return startLoopbackWith(t, nil, ServeOptions{}, kinds...)
}

// startLoopbackWith serves extra provider registrations too, with the
// transport settings of opts.
func startLoopbackWith(t *testing.T, extra []plugin.Registration, opts ServeOptions, kinds ...string) *loopback {
	t.Helper()
	catalog, err := plugin.NewIndex(append([]plugin.Registration{fakeprovider.Registration, kubernetes.Registration,
		password.Registration, uuid.Registration}, extra...))
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	for _, r := range catalog.All() {
		if err := r.AddToScheme(scheme); err != nil {
			t.Fatal(err)
		}
	}
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&provv1.Fake{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "team-a", UID: "u1", Generation: 1},
			Spec: provv1.FakeSpec{Data: []provv1.FakeSecret{
				{Key: "db", Value: `{"user":"admin","password":"s3cr3t"}`},
				{Key: "api-token", Value: "t0ken"},
			}}},
		&genv1.Password{ObjectMeta: metav1.ObjectMeta{Name: "pw", Namespace: "team-a"}, Spec: genv1.PasswordSpec{Length: 32}},
	).Build()
	counted := &countingReader{Client: kube}
	deps := plugin.Deps{Client: counted, APIReader: counted}
	plugins := plugin.NewPlugins(catalog, deps)
	s, err := New(Options{
		Plugins:      plugins,
		ConfigReader: counted,
		Kinds:        kinds,
		ConfigTTL:    time.Nanosecond, // every request sees the current configuration
		Log:          logr.Discard(),
	})
	if err != nil {
		t.Fatal(err)
	}

	serverCA, clientCA := newTestCA(t, "server-ca"), newTestCA(t, "client-ca")
	tlsConfig, err := NewServerTLSConfig(serverFiles(t, t.TempDir(), serverCA, clientCA), time.Hour, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts.TLS, opts.Metrics, opts.Log = tlsConfig, m, logr.Discard()
	endpoint := NewEndpoint(lis, s, opts)
	served := make(chan error, 1)
	go func() { served <- endpoint.Serve() }()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(clientTLS(t, clientCA, serverCA))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		endpoint.Shutdown(context.Background())
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return &loopback{server: s, endpoint: endpoint, kube: kube, conn: conn, metrics: m, plugins: plugins,
		reads: counted, addr: lis.Addr().String(), serverCA: serverCA, clientCA: clientCA,
		stores:     providerv1.NewSecretStoreProviderClient(conn),
		generators: providerv1.NewGeneratorProviderClient(conn),
		info:       providerv1.NewInfoClient(conn),
	}
}

var demo = &providerv1.Target{Kind: "Fake", Name: "demo", Namespace: "team-a", CredentialsNamespace: "team-a"}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestHandshake(t *testing.T) {
	lb := startLoopback(t)
	resp, err := lb.info.Handshake(callCtx(t), &providerv1.HandshakeRequest{ProtocolMajors: []uint32{1}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(resp.ProtocolMajors, []uint32{wire.ProtocolMajor}) || resp.ProtocolMinor != wire.ProtocolMinor || resp.ServerVersion == "" {
		t.Errorf("protocol %v.%d, version %q", resp.ProtocolMajors, resp.ProtocolMinor, resp.ServerVersion)
	}
	if !slices.Equal(resp.ProviderKinds, []string{"Fake", "Kubernetes"}) || !slices.Equal(resp.GeneratorKinds, []string{"Password", "UUID"}) {
		t.Errorf("kinds %v and %v", resp.ProviderKinds, resp.GeneratorKinds)
	}
	health, err := healthpb.NewHealthClient(lb.conn).Check(callCtx(t), &healthpb.HealthCheckRequest{Service: "eso.provider.v1.SecretStoreProvider"})
	if err != nil || health.Status != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health %v, %v", health, err)
	}
}

func TestReadSecrets(t *testing.T) {
	lb := startLoopback(t)
	ctx := callCtx(t)
	logins := func() float64 {
		return testutil.ToFloat64(pluginmetrics.ProviderLogins.WithLabelValues("Fake", "success"))
	}
	before := logins()

	one, err := lb.stores.GetSecret(ctx, &providerv1.GetSecretRequest{Target: demo, Ref: &providerv1.RemoteRef{Key: "db", Property: "user"}})
	if err != nil || string(one.Value) != "admin" {
		t.Fatalf("GetSecret = %q, %v", one.GetValue(), err)
	}
	fields, err := lb.stores.GetSecretMap(ctx, &providerv1.GetSecretRequest{Target: demo, Ref: &providerv1.RemoteRef{Key: "db"}})
	if err != nil || string(fields.Data["user"]) != "admin" || string(fields.Data["password"]) != "s3cr3t" {
		t.Fatalf("GetSecretMap = %v, %v", fields.GetData(), err)
	}
	regexp := "^api-"
	all, err := lb.stores.GetAllSecrets(ctx, &providerv1.GetAllSecretsRequest{Target: demo, Find: &providerv1.Find{NameRegexp: &regexp}})
	if err != nil || len(all.Data) != 1 || string(all.Data["api-token"]) != "t0ken" {
		t.Fatalf("GetAllSecrets = %v, %v", all.GetData(), err)
	}
	caps, err := lb.stores.Capabilities(ctx, &providerv1.CapabilitiesRequest{Target: demo})
	if err != nil || caps.Capabilities != string(plugin.ReadWrite) {
		t.Fatalf("Capabilities = %v, %v", caps, err)
	}
	if _, err := lb.stores.CheckAuth(ctx, &providerv1.CheckAuthRequest{Target: demo}); err != nil {
		t.Fatalf("CheckAuth: %v", err)
	}
	if got := logins() - before; got != 1 {
		t.Errorf("%v clients built for five calls through one configuration, want 1", got)
	}

	// A changed configuration gets a new client; the replaced one is closed.
	var cfg provv1.Fake
	if err := lb.kube.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "demo"}, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Spec.Data[1].Value = "t0ken-2"
	cfg.Generation++ // the fake API server does not count generations
	if err := lb.kube.Update(ctx, &cfg); err != nil {
		t.Fatal(err)
	}
	one, err = lb.stores.GetSecret(ctx, &providerv1.GetSecretRequest{Target: demo, Ref: &providerv1.RemoteRef{Key: "api-token"}})
	if err != nil || string(one.Value) != "t0ken-2" {
		t.Fatalf("after the change GetSecret = %q, %v", one.GetValue(), err)
	}
	if got := logins() - before; got != 2 {
		t.Errorf("%v clients built after one configuration change, want 2", got)
	}

	requests := testutil.ToFloat64(lb.metrics.requests.WithLabelValues("eso.provider.v1.SecretStoreProvider", "GetSecret", "OK"))
	if requests != 2 {
		t.Errorf("eso_grpc_server_requests_total for GetSecret OK = %v, want 2", requests)
	}
}

func TestErrorsArriveAsContractErrors(t *testing.T) {
	lb := startLoopback(t)
	ctx := callCtx(t)
	_, err := lb.stores.GetSecret(ctx, &providerv1.GetSecretRequest{Target: demo, Ref: &providerv1.RemoteRef{Key: "missing"}})
	if got := wire.FromStatus(err); !errors.Is(got, plugin.ErrSecretNotFound) || !strings.Contains(got.Error(), `"missing"`) {
		t.Fatalf("a missing secret arrived as %v", got)
	}
	_, err = lb.stores.GetSecret(ctx, &providerv1.GetSecretRequest{Target: demo, Ref: &providerv1.RemoteRef{Key: "db", Property: "nope"}})
	if got := wire.FromStatus(err); !errors.Is(got, plugin.ErrPropertyNotFound) || strings.Contains(got.Error(), "s3cr3t") {
		t.Fatalf("a missing property arrived as %v", got)
	}
	gone := &providerv1.Target{Kind: "Fake", Name: "gone", Namespace: "team-a", CredentialsNamespace: "team-a"}
	_, err = lb.stores.GetSecret(ctx, &providerv1.GetSecretRequest{Target: gone, Ref: &providerv1.RemoteRef{Key: "db"}})
	if got := wire.FromStatus(err); !errors.Is(got, plugin.ErrConfigNotFound) {
		t.Fatalf("a missing configuration arrived as %v", got)
	}
	_, err = lb.stores.PushSecret(ctx, &providerv1.PushSecretRequest{Target: demo, RemoteKey: "db", Value: []byte("v")})
	if got := wire.FromStatus(err); !errors.Is(got, plugin.ErrNotManaged) {
		t.Fatalf("a push over a secret eso did not create arrived as %v", got)
	}
	_, err = lb.stores.GetSecret(ctx, &providerv1.GetSecretRequest{Target: &providerv1.Target{Kind: "Fake", Name: "demo", Namespace: "team-a"}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "credentials_namespace") {
		t.Fatalf("a target without a credentials namespace: %v", err)
	}
}

func TestKindNotServed(t *testing.T) {
	lb := startLoopback(t, "Fake", "Password")
	ctx := callCtx(t)
	resp, err := lb.info.Handshake(ctx, &providerv1.HandshakeRequest{})
	if err != nil || !slices.Equal(resp.ProviderKinds, []string{"Fake"}) || !slices.Equal(resp.GeneratorKinds, []string{"Password"}) {
		t.Fatalf("Handshake = %v, %v", resp, err)
	}
	for _, kind := range []string{"Kubernetes", "Vault"} {
		target := &providerv1.Target{Kind: kind, Name: "x", Namespace: "team-a", CredentialsNamespace: "team-a"}
		_, err := lb.stores.GetSecret(ctx, &providerv1.GetSecretRequest{Target: target, Ref: &providerv1.RemoteRef{Key: "db"}})
		if status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), `provider kind "`+kind+`" is not served by this provider process (served: Fake)`) {
			t.Errorf("%s: %v", kind, err)
		}
	}
	uuidTarget := &providerv1.Target{Kind: "UUID", Name: "x", Namespace: "team-a", CredentialsNamespace: "team-a"}
	if _, err := lb.generators.Generate(ctx, &providerv1.GenerateRequest{Target: uuidTarget}); status.Code(err) != codes.Unimplemented {
		t.Errorf("UUID: %v", err)
	}
	if _, err := New(Options{Plugins: lb.plugins, Kinds: []string{"Nope"}}); err == nil ||
		!strings.Contains(err.Error(), "Nope is not compiled into this binary") {
		t.Errorf("selecting a kind not compiled in: %v", err)
	}
}

func TestGenerate(t *testing.T) {
	lb := startLoopback(t)
	ctx := callCtx(t)
	pw := &providerv1.Target{Kind: "Password", Name: "pw", Namespace: "team-a", CredentialsNamespace: "team-a"}
	first, err := lb.generators.Generate(ctx, &providerv1.GenerateRequest{Target: pw})
	if err != nil || len(first.Data["password"]) != 32 || first.State != nil {
		t.Fatalf("Generate = %d bytes, state %q, %v", len(first.GetData()["password"]), first.GetState(), err)
	}
	second, err := lb.generators.Generate(ctx, &providerv1.GenerateRequest{Target: pw})
	if err != nil || string(second.Data["password"]) == string(first.Data["password"]) {
		t.Fatalf("a second Generate: %v (same value: %v)", err, err == nil)
	}
	if _, err := lb.generators.Cleanup(ctx, &providerv1.CleanupRequest{Target: pw}); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	if _, err := lb.generators.ValidateGenerator(ctx, &providerv1.ValidateRequest{Target: &providerv1.Target{Kind: "Password", Name: "pw", Namespace: "team-a"}}); err != nil {
		t.Fatalf("ValidateGenerator: %v", err)
	}
	missing := &providerv1.Target{Kind: "Password", Name: "none", Namespace: "team-a", CredentialsNamespace: "team-a"}
	_, err = lb.generators.Generate(ctx, &providerv1.GenerateRequest{Target: missing})
	if got := wire.FromStatus(err); !errors.Is(got, plugin.ErrConfigNotFound) {
		t.Fatalf("a missing generator configuration arrived as %v", got)
	}
}
