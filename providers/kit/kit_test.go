package kit

import (
	"context"
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/generators"
	"github.com/eso-dev/eso/providers"
)

func TestJSONValues(t *testing.T) {
	ctx := context.Background()
	values := map[string]string{"db": `{"user":"app","nested":{"port":5432}}`, "plain": "text"}
	j := JSONValues{
		Value: func(_ context.Context, key, version string) ([]byte, error) {
			v, ok := values[key]
			if !ok || version != "" {
				return nil, providers.ErrSecretNotFound
			}
			return []byte(v), nil
		},
		Metadata: func(context.Context, string) (map[string]string, error) { return map[string]string{"team": "a"}, nil },
	}
	cases := []struct {
		ref     esv1.ExternalSecretDataRemoteRef
		want    string
		wantErr error
	}{
		{esv1.ExternalSecretDataRemoteRef{Key: "db"}, `{"user":"app","nested":{"port":5432}}`, nil},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "user"}, "app", nil},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "nested.port"}, "5432", nil},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "missing"}, "", providers.ErrPropertyNotFound},
		{esv1.ExternalSecretDataRemoteRef{Key: "plain", Property: "x"}, "", providers.ErrPropertyNotFound},
		{esv1.ExternalSecretDataRemoteRef{Key: "gone"}, "", providers.ErrSecretNotFound},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Version: "7"}, "", providers.ErrSecretNotFound},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", MetadataPolicy: esv1.MetadataPolicyFetch}, `{"team":"a"}`, nil},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", MetadataPolicy: esv1.MetadataPolicyFetch, Property: "team"}, "a", nil},
	}
	for _, tc := range cases {
		got, err := j.GetSecret(ctx, tc.ref)
		if !errors.Is(err, tc.wantErr) || string(got) != tc.want {
			t.Errorf("GetSecret(%+v) = %q, %v; want %q, %v", tc.ref, got, err, tc.want, tc.wantErr)
		}
	}
	fields, err := j.GetSecretMap(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"})
	if err != nil || string(fields["user"]) != "app" || string(fields["nested"]) != `{"port":5432}` {
		t.Errorf("GetSecretMap = %q, %v", fields, err)
	}
	if _, err := j.GetSecretMap(ctx, esv1.ExternalSecretDataRemoteRef{Key: "plain"}); err == nil {
		t.Error("GetSecretMap of a value that is not an object succeeded")
	}
	noMeta := JSONValues{Value: j.Value}
	if _, err := noMeta.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db", MetadataPolicy: esv1.MetadataPolicyFetch}); !errors.Is(err, providers.ErrNotSupported) {
		t.Errorf("metadata from a backend without any = %v, want ErrNotSupported", err)
	}
}

// TestDeletion runs DeleteSecret's rules against a recording backend.
func TestDeletion(t *testing.T) {
	cases := []struct {
		name             string
		exists, managed  bool
		current, prop    string
		wantCalls        []string
		wantErr          error
		wantRewrittenNow string
	}{
		{name: "absent", wantCalls: []string{"state"}},
		{name: "not eso's", exists: true, wantCalls: []string{"state"}, wantErr: providers.ErrNotManaged},
		{name: "whole secret", exists: true, managed: true, wantCalls: []string{"state", "delete"}},
		{name: "one of two properties", exists: true, managed: true, current: `{"a":"1","b":"2"}`, prop: "a",
			wantCalls: []string{"state", "current", "rewrite"}, wantRewrittenNow: `{"b":"2"}`},
		{name: "the last property", exists: true, managed: true, current: `{"a":"1"}`, prop: "a",
			wantCalls: []string{"state", "current", "delete"}},
		{name: "property already gone", exists: true, managed: true, current: `{"b":"2"}`, prop: "a",
			wantCalls: []string{"state", "current"}},
		{name: "not an object", exists: true, managed: true, current: `text`, prop: "a",
			wantCalls: []string{"state", "current"}, wantErr: providers.ErrInvalidConfig},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls []string
			var rewritten string
			err := Deletion{
				Key: "k", Property: tc.prop,
				State: func(context.Context) (bool, bool, error) {
					calls = append(calls, "state")
					return tc.exists, tc.managed, nil
				},
				Current: func(context.Context) ([]byte, error) {
					calls = append(calls, "current")
					return []byte(tc.current), nil
				},
				Rewrite: func(_ context.Context, rest []byte) error {
					calls = append(calls, "rewrite")
					rewritten = string(rest)
					return nil
				},
				Delete: func(context.Context) error {
					calls = append(calls, "delete")
					return nil
				},
			}.Run(context.Background())
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("Run = %v, want %v", err, tc.wantErr)
			}
			if !slices.Equal(calls, tc.wantCalls) {
				t.Errorf("calls %v, want %v", calls, tc.wantCalls)
			}
			if rewritten != tc.wantRewrittenNow {
				t.Errorf("rewrote %q, want %q", rewritten, tc.wantRewrittenNow)
			}
		})
	}
}

// TestDefinition: the kit reads the configuration, runs Check before
// everything, and CheckCredentials only once a namespace is known.
func TestDefinition(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := provv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	good := &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "good"}}
	bad := &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "bad"}}
	c := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(good, bad).Build()
	var credentialChecks []string
	def := Definition[*provv1.Fake]{
		Name: "fake", Kind: "Fake", AddToScheme: provv1.AddToScheme,
		NewConfig: func() *provv1.Fake { return &provv1.Fake{} },
		Check: func(cfg *provv1.Fake) error {
			if cfg.Name == "bad" {
				return providers.ErrInvalidConfig
			}
			return nil
		},
		CheckCredentials: func(_ context.Context, _ providers.Deps, cfg *provv1.Fake, scope providers.Scope) error {
			credentialChecks = append(credentialChecks, scope.Namespace)
			return nil
		},
		NewClient: func(context.Context, providers.Deps, *provv1.Fake, providers.Scope) (providers.SecretsClient, error) {
			return nil, nil
		},
	}
	p := def.Registration().New(providers.Deps{Client: c})
	ctx := context.Background()
	ref := func(name string) providers.Ref { return providers.Ref{Kind: "Fake", Namespace: "team", Name: name} }
	if p.Kind() != "Fake" {
		t.Errorf("Kind = %q", p.Kind())
	}
	if err := p.Validate(ctx, ref("missing"), providers.Scope{Namespace: "team"}); !errors.Is(err, providers.ErrConfigNotFound) {
		t.Errorf("Validate of a missing configuration = %v", err)
	}
	if err := p.Validate(ctx, ref("bad"), providers.Scope{Namespace: "team"}); !errors.Is(err, providers.ErrInvalidConfig) {
		t.Errorf("Validate of a configuration Check refuses = %v", err)
	}
	if _, err := p.NewClient(ctx, ref("bad"), providers.Scope{Namespace: "team"}); !errors.Is(err, providers.ErrInvalidConfig) {
		t.Errorf("NewClient of a configuration Check refuses = %v", err)
	}
	if err := p.Validate(ctx, ref("good"), providers.Scope{}); err != nil || len(credentialChecks) != 0 {
		t.Errorf("Validate without a namespace = %v, credentials checked in %v", err, credentialChecks)
	}
	if err := p.Validate(ctx, ref("good"), providers.Scope{Namespace: "team"}); err != nil || !slices.Equal(credentialChecks, []string{"team"}) {
		t.Errorf("Validate in team = %v, credentials checked in %v", err, credentialChecks)
	}
}

// TestGeneratorCleanupOnlyWithState: Cleanup reads nothing and calls nothing
// when there is no state or the generator revokes nothing.
func TestGeneratorCleanupOnlyWithState(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := provv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(&provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "g"}}).Build()
	var cleaned []string
	def := GeneratorDefinition[*provv1.Fake]{
		Kind: "Fake", NewConfig: func() *provv1.Fake { return &provv1.Fake{} },
		Cleanup: func(_ context.Context, _ providers.Deps, _ *provv1.Fake, _ providers.Scope, state generators.State) error {
			cleaned = append(cleaned, string(state))
			return nil
		},
	}
	g := def.New(providers.Deps{Client: c})
	ctx, scope := context.Background(), providers.Scope{Namespace: "team"}
	missing := providers.Ref{Kind: "Fake", Namespace: "team", Name: "missing"}
	if err := g.Cleanup(ctx, missing, scope, nil); err != nil {
		t.Errorf("Cleanup without state read the configuration: %v", err)
	}
	if err := g.Cleanup(ctx, missing, scope, generators.State(`{"lease":"1"}`)); !errors.Is(err, providers.ErrConfigNotFound) {
		t.Errorf("Cleanup of a missing configuration = %v", err)
	}
	if err := g.Cleanup(ctx, providers.Ref{Kind: "Fake", Namespace: "team", Name: "g"}, scope, generators.State(`{"lease":"1"}`)); err != nil || !slices.Equal(cleaned, []string{`{"lease":"1"}`}) {
		t.Errorf("Cleanup = %v, cleaned %v", err, cleaned)
	}
	def.Cleanup = nil
	if err := def.New(providers.Deps{Client: c}).Cleanup(ctx, missing, scope, generators.State(`{}`)); err != nil {
		t.Errorf("Cleanup of a generator that revokes nothing = %v", err)
	}
}
