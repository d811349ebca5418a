package kit

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eso-dev/eso/generators"
	"github.com/eso-dev/eso/providers"
)

// GeneratorDefinition is a generator whose configuration objects are of
// type C: its names and what it does with a configuration once read. It is
// Definition's counterpart for generators.
type GeneratorDefinition[C client.Object] struct {
	// Name is the short name, e.g. "password"; Kind the configuration kind.
	Name, Kind string
	// AddToScheme registers the configuration kind; NewConfig returns an
	// empty configuration object.
	AddToScheme func(*runtime.Scheme) error
	NewConfig   func() C
	// Check, if set, rejects a configuration that cannot work whatever the
	// namespace. It runs before every Validate, Generate and Cleanup.
	Check func(cfg C) error
	// CheckCredentials, if set, resolves the credentials cfg references in
	// scope without calling the backend; Validate skips it while the scope
	// has no namespace yet.
	CheckCredentials func(ctx context.Context, deps providers.Deps, cfg C, scope providers.Scope) error
	// Generate produces new values, resolving credentials in scope only.
	Generate func(ctx context.Context, deps providers.Deps, cfg C, scope providers.Scope) (map[string][]byte, generators.State, error)
	// Cleanup revokes what Generate returned with state (never empty here).
	// Nil when nothing a generator makes can be revoked: it expires or is
	// only a value.
	Cleanup func(ctx context.Context, deps providers.Deps, cfg C, scope providers.Scope, state generators.State) error
}

// Registration is d as the registry lists it.
func (d GeneratorDefinition[C]) Registration() generators.Registration {
	return generators.Registration{
		Name:        d.Name,
		Kind:        d.Kind,
		AddToScheme: d.AddToScheme,
		NewConfig:   func() client.Object { return d.NewConfig() },
		New:         d.New,
	}
}

// New builds the generator of d with deps.
func (d GeneratorDefinition[C]) New(deps providers.Deps) generators.Generator {
	return &generator[C]{def: d, deps: deps}
}

type generator[C client.Object] struct {
	def  GeneratorDefinition[C]
	deps providers.Deps
}

func (g *generator[C]) Kind() string { return g.def.Kind }

func (g *generator[C]) Validate(ctx context.Context, ref providers.Ref, scope providers.Scope) error {
	return validate(ctx, g.deps, ref, scope, g.def.NewConfig, g.def.Check, g.def.CheckCredentials)
}

func (g *generator[C]) Generate(ctx context.Context, ref providers.Ref, scope providers.Scope) (map[string][]byte, generators.State, error) {
	cfg, err := read(ctx, g.deps, ref, g.def.NewConfig, g.def.Check)
	if err != nil {
		return nil, nil, err
	}
	return g.def.Generate(ctx, g.deps, cfg, scope)
}

// Cleanup reads the configuration only when there is something to revoke.
func (g *generator[C]) Cleanup(ctx context.Context, ref providers.Ref, scope providers.Scope, state generators.State) error {
	if g.def.Cleanup == nil || len(state) == 0 {
		return nil
	}
	cfg, err := read(ctx, g.deps, ref, g.def.NewConfig, g.def.Check)
	if err != nil {
		return err
	}
	return g.def.Cleanup(ctx, g.deps, cfg, scope, state)
}
