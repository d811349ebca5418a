package sdk

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

type testSpec struct {
	Endpoint string `json:"endpoint"`
}

type mapClient map[string]string

func (m mapClient) Read(_ context.Context, key, _ string) ([]byte, error) {
	v, ok := m[key]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	return []byte(v), nil
}

var testProvider = Provider[testSpec]{
	Kind: "Test",
	Validate: func(s *testSpec) error {
		if !strings.HasPrefix(s.Endpoint, "https://") {
			return errors.New("endpoint must be https")
		}
		return nil
	},
}

func config(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
}

// TestSpecDecoding: a spec decodes strictly, and every refusal (unknown
// field, wrong type, Validate) is ErrInvalidConfig, which core shows as
// the store's invalid configuration.
func TestSpecDecoding(t *testing.T) {
	for name, tc := range map[string]struct {
		spec    map[string]any
		wantErr string
	}{
		"valid":          {map[string]any{"endpoint": "https://store"}, ""},
		"unknown field":  {map[string]any{"endpoint": "https://store", "typo": 1}, `unknown field "typo"`},
		"wrong type":     {map[string]any{"endpoint": 42}, "cannot unmarshal number"},
		"validate fails": {map[string]any{"endpoint": "http://store"}, "endpoint must be https"},
	} {
		t.Run(name, func(t *testing.T) {
			spec, err := testProvider.spec(config(tc.spec))
			switch {
			case tc.wantErr == "" && (err != nil || spec.Endpoint != "https://store"):
				t.Fatalf("spec = %+v, %v", spec, err)
			case tc.wantErr != "" && (!errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want ErrInvalidConfig with %q", err, tc.wantErr)
			}
		})
	}
}

// TestReadOnlyClients: a client without Lister or Writer answers find and
// every write with ErrNotSupported, and reports ReadOnly.
func TestReadOnlyClients(t *testing.T) {
	ctx := context.Background()
	a := newAdapter(mapClient{"db": `{"user":"app"}`}, "ns/test")
	if got, err := a.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "user"}); err != nil || string(got) != "app" {
		t.Fatalf("GetSecret = %q, %v", got, err)
	}
	if a.Capabilities() != plugin.ReadOnly {
		t.Errorf("Capabilities = %s", a.Capabilities())
	}
	if _, err := a.GetAllSecrets(ctx, esv1.ExternalSecretFind{}); !errors.Is(err, ErrNotSupported) {
		t.Errorf("find without a Lister = %v", err)
	}
	if err := a.PushSecret(ctx, plugin.PushRequest{RemoteKey: "db", Value: []byte("x")}); !errors.Is(err, ErrNotSupported) {
		t.Errorf("push without a Writer = %v", err)
	}
	if err := a.DeleteSecret(ctx, "db", ""); !errors.Is(err, ErrNotSupported) {
		t.Errorf("delete without a Writer = %v", err)
	}
	if _, err := a.SecretExists(ctx, "db"); !errors.Is(err, ErrNotSupported) {
		t.Errorf("exists without a Writer = %v", err)
	}
}

// TestListenRefusesPlaintextUnlessAsked: mTLS is the default, and
// plaintext never mixes with certificates.
func TestListenRefusesPlaintextUnlessAsked(t *testing.T) {
	for name, opts := range map[string]Options{
		"no TLS, not insecure":  {},
		"insecure with a cert":  {Insecure: true, TLSCertFile: "tls.crt"},
		"TLS without client CA": {TLSCertFile: "tls.crt", TLSKeyFile: "tls.key"},
	} {
		if _, err := Listen(opts, testProvider); err == nil {
			t.Errorf("%s: Listen succeeded", name)
		}
	}
	if _, err := Listen(Options{Insecure: true}); err == nil {
		t.Error("Listen without providers succeeded")
	}
}

// TestFlags: the process takes eso's provider-mode flags, so eso's
// provider chart runs it unchanged, and refuses what it cannot be.
func TestFlags(t *testing.T) {
	opts, err := parseFlags("p", []string{"--mode=provider", "--grpc-bind-address=:9443", "--tls-cert-file=a", "--tls-key-file=b",
		"--tls-client-ca-file=c", "--provider-kinds=InMemory,Other", "--metrics-bind-address=:9090",
		"--health-probe-bind-address=:9091", "--log-level=error", "--log-format=console"})
	if err != nil || opts.GRPCAddress != ":9443" || opts.TLSClientCAFile != "c" || len(opts.Kinds) != 2 || opts.MetricsAddress != ":9090" {
		t.Fatalf("parseFlags = %+v, %v", opts, err)
	}
	for _, bad := range [][]string{{"--mode=core"}, {"--log-level=loud"}, {"--log-format=xml"}, {"extra"}, {"--no-such-flag"}} {
		if _, err := parseFlags("p", bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// A Definition, the type eso's in-tree providers are written with, is served
// like a Provider.
var _ Registrar = Definition[*unstructured.Unstructured]{}
