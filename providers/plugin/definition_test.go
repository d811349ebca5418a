package plugin

import (
	"context"
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	genprovv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
)

// TestDefinition: a Definition reads the configuration, runs Check before
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
				return ErrInvalidConfig
			}
			return nil
		},
		CheckCredentials: func(_ context.Context, _ Deps, cfg *provv1.Fake, scope Scope) error {
			credentialChecks = append(credentialChecks, scope.Namespace)
			return nil
		},
		NewClient: func(context.Context, Deps, *provv1.Fake, Scope) (SecretsClient, error) {
			return nil, nil
		},
	}
	p := def.Registration().NewProvider(Deps{Client: c})
	ctx := context.Background()
	ref := func(name string) Ref { return Ref{Kind: "Fake", Namespace: "team", Name: name} }
	if p.Kind() != "Fake" {
		t.Errorf("Kind = %q", p.Kind())
	}
	if err := p.Validate(ctx, ref("missing"), Scope{Namespace: "team"}); !errors.Is(err, ErrConfigNotFound) {
		t.Errorf("Validate of a missing configuration = %v", err)
	}
	if err := p.Validate(ctx, ref("bad"), Scope{Namespace: "team"}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Validate of a configuration Check refuses = %v", err)
	}
	if _, err := p.NewClient(ctx, ref("bad"), Scope{Namespace: "team"}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("NewClient of a configuration Check refuses = %v", err)
	}
	if err := p.Validate(ctx, ref("good"), Scope{}); err != nil || len(credentialChecks) != 0 {
		t.Errorf("Validate without a namespace = %v, credentials checked in %v", err, credentialChecks)
	}
	if err := p.Validate(ctx, ref("good"), Scope{Namespace: "team"}); err != nil || !slices.Equal(credentialChecks, []string{"team"}) {
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
	def := Definition[*provv1.Fake]{
		Kind: "Fake", NewConfig: func() *provv1.Fake { return &provv1.Fake{} },
		Generate: func(context.Context, Deps, *provv1.Fake, Scope) (map[string][]byte, State, error) {
			return nil, nil, nil
		},
		Cleanup: func(_ context.Context, _ Deps, _ *provv1.Fake, _ Scope, state State) error {
			cleaned = append(cleaned, string(state))
			return nil
		},
	}
	g := def.Registration().NewGenerator(Deps{Client: c})
	ctx, scope := context.Background(), Scope{Namespace: "team"}
	missing := Ref{Kind: "Fake", Namespace: "team", Name: "missing"}
	if err := g.Cleanup(ctx, missing, scope, nil); err != nil {
		t.Errorf("Cleanup without state read the configuration: %v", err)
	}
	if err := g.Cleanup(ctx, missing, scope, State(`{"lease":"1"}`)); !errors.Is(err, ErrConfigNotFound) {
		t.Errorf("Cleanup of a missing configuration = %v", err)
	}
	if err := g.Cleanup(ctx, Ref{Kind: "Fake", Namespace: "team", Name: "g"}, scope, State(`{"lease":"1"}`)); err != nil || !slices.Equal(cleaned, []string{`{"lease":"1"}`}) {
		t.Errorf("Cleanup = %v, cleaned %v", err, cleaned)
	}
	def.Cleanup = nil
	if err := def.Registration().NewGenerator(Deps{Client: c}).Cleanup(ctx, missing, scope, State(`{}`)); err != nil {
		t.Errorf("Cleanup of a generator that revokes nothing = %v", err)
	}
}

// TestDefinitionDefaults: without AddToScheme and NewConfig, a provider's
// configuration is a new zero C registered with the provider configuration
// API, a generator's with the generator configuration API.
func TestDefinitionDefaults(t *testing.T) {
	prov := Definition[*provv1.Fake]{Name: "fake", Kind: "Fake",
		NewClient: func(context.Context, Deps, *provv1.Fake, Scope) (SecretsClient, error) { return nil, nil }}.Registration()
	gen := Definition[*genprovv1.UUID]{Name: "uuid", Kind: "UUID",
		Generate: func(context.Context, Deps, *genprovv1.UUID, Scope) (map[string][]byte, State, error) {
			return nil, nil, nil
		}}.Registration()
	for _, tc := range []struct {
		reg  Registration
		want schema.GroupVersionKind
	}{
		{prov, provv1.GroupVersion.WithKind("Fake")},
		{gen, genprovv1.GroupVersion.WithKind("UUID")},
	} {
		a, b := tc.reg.NewConfig(), tc.reg.NewConfig()
		if a == nil || a == b {
			t.Errorf("%s: NewConfig returned %p and %p, want two new objects", tc.reg.Kind, a, b)
		}
		scheme := runtime.NewScheme()
		if err := tc.reg.AddToScheme(scheme); err != nil {
			t.Fatal(err)
		}
		if gvks, _, err := scheme.ObjectKinds(a); err != nil || gvks[0] != tc.want {
			t.Errorf("%s: registered as %v, %v; want %v", tc.reg.Kind, gvks, err, tc.want)
		}
	}
}
