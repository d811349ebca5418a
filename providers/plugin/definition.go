package plugin

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	genprovv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
)

// Definition is a plugin whose configuration objects are of type C (a
// pointer to the API type, e.g. *provv1.Vault): its names and what it does
// with a configuration once read. It is the one way a plugin is written:
// in this tree, and by package sdk for providers outside it.
//
// A provider sets NewClient; a generator sets Generate (and Cleanup when
// what it makes can be revoked). Reading the configuration, running Check
// and resolving credentials are the Definition's, not the plugin's.
type Definition[C client.Object] struct {
	// Name is the short name, e.g. "vault"; Kind the configuration kind.
	Name, Kind string
	// AddToScheme registers the configuration kind: by default the API
	// package of the role's configurations (provider.secretstore or
	// provider.generator.external-secrets.io). NewConfig returns an empty
	// configuration object: by default a new zero C.
	AddToScheme func(*runtime.Scheme) error
	NewConfig   func() C
	// Check, if set, rejects a configuration that cannot work whatever the
	// namespace, e.g. inconsistent fields. It runs before Validate's
	// credential check and before every use of the configuration.
	Check func(cfg C) error
	// CheckCredentials, if set, resolves the credentials cfg references in
	// scope without calling the backend. Validate skips it while the scope
	// has no namespace yet (a cluster-scoped store or generator whose
	// credentials resolve per request).
	CheckCredentials func(ctx context.Context, deps Deps, cfg C, scope Scope) error

	// NewClient builds a client of cfg bound to scope: a provider.
	NewClient func(ctx context.Context, deps Deps, cfg C, scope Scope) (SecretsClient, error)

	// Generate produces new values, resolving credentials in scope only: a
	// generator.
	Generate func(ctx context.Context, deps Deps, cfg C, scope Scope) (map[string][]byte, State, error)
	// Cleanup revokes what Generate returned with state (never empty here).
	// Nil when nothing the generator makes can be revoked: it expires or is
	// only a value.
	Cleanup func(ctx context.Context, deps Deps, cfg C, scope Scope, state State) error
}

// Registration is d as the registry lists it: a provider when NewClient is
// set, a generator when Generate is.
func (d Definition[C]) Registration() Registration {
	if d.NewConfig == nil {
		elem := reflect.TypeFor[C]().Elem()
		d.NewConfig = func() C { return reflect.New(elem).Interface().(C) }
	}
	if d.AddToScheme == nil {
		d.AddToScheme = provv1.AddToScheme
		if d.Generate != nil {
			d.AddToScheme = genprovv1.AddToScheme
		}
	}
	r := Registration{
		Name:        d.Name,
		Kind:        d.Kind,
		AddToScheme: d.AddToScheme,
		NewConfig:   func() client.Object { return d.NewConfig() },
	}
	if d.NewClient != nil {
		r.NewProvider = func(deps Deps) Provider { return &provider[C]{plugin[C]{d, deps}} }
	}
	if d.Generate != nil {
		r.NewGenerator = func(deps Deps) Generator { return &generator[C]{plugin[C]{d, deps}} }
	}
	return r
}

// Role is what a plugin does: reads and writes secrets, or generates values.
type Role string

const (
	RoleProvider  Role = "provider"
	RoleGenerator Role = "generator"
)

// Registration describes a compiled-in plugin. It is pure data plus a
// constructor without side effects, so listing plugins costs nothing.
// Exactly one of NewProvider and NewGenerator is set.
type Registration struct {
	// Name is the short name, e.g. "fake".
	Name string
	// Kind is the configuration kind: in provider.secretstore.external-secrets.io
	// for a provider, in provider.generator.external-secrets.io for a generator.
	Kind string
	// BuildTag is the catalog tag the wiring compiled the plugin in with;
	// empty means always compiled in.
	BuildTag string
	// AddToScheme registers the configuration kind.
	AddToScheme func(*runtime.Scheme) error
	// NewConfig returns an empty configuration object, for watches.
	NewConfig func() client.Object
	// NewProvider builds the provider; NewGenerator the generator.
	NewProvider  func(Deps) Provider
	NewGenerator func(Deps) Generator
}

// Role says whether r is a provider or a generator.
func (r Registration) Role() Role {
	if r.NewGenerator != nil {
		return RoleGenerator
	}
	return RoleProvider
}

// Complete reports what r lacks to be registered, or nil.
func (r Registration) Complete() error {
	switch {
	case r.Name == "" || r.Kind == "":
		return errors.New("no name or kind")
	case (r.NewProvider == nil) == (r.NewGenerator == nil):
		return errors.New("not exactly one of provider and generator")
	}
	return nil
}

// plugin is what a provider and a generator built from a Definition share.
type plugin[C client.Object] struct {
	def  Definition[C]
	deps Deps
}

func (p plugin[C]) Kind() string { return p.def.Kind }

// read reads the configuration ref names and runs Check on it.
func (p plugin[C]) read(ctx context.Context, ref Ref) (C, error) {
	cfg := p.def.NewConfig()
	if err := ReadConfig(ctx, p.deps.Client, ref, cfg); err != nil {
		var zero C
		return zero, err
	}
	return p.checked(cfg)
}

// checked runs Check on cfg.
func (p plugin[C]) checked(cfg C) (C, error) {
	if p.def.Check != nil {
		if err := p.def.Check(cfg); err != nil {
			var zero C
			return zero, err
		}
	}
	return cfg, nil
}

// Validate reads and checks the configuration, and resolves its
// credentials once the scope has a namespace.
func (p plugin[C]) Validate(ctx context.Context, ref Ref, scope Scope) error {
	cfg, err := p.read(ctx, ref)
	if err != nil {
		return err
	}
	return p.checkCredentials(ctx, cfg, scope)
}

func (p plugin[C]) checkCredentials(ctx context.Context, cfg C, scope Scope) error {
	if scope.Namespace == "" || p.def.CheckCredentials == nil {
		return nil
	}
	return p.def.CheckCredentials(ctx, p.deps, cfg, scope)
}

// provider is a Definition with NewClient, as core calls it.
type provider[C client.Object] struct{ plugin[C] }

func (p *provider[C]) NewClient(ctx context.Context, ref Ref, scope Scope) (SecretsClient, error) {
	cfg, err := p.read(ctx, ref)
	if err != nil {
		return nil, err
	}
	return p.def.NewClient(ctx, p.deps, cfg, scope)
}

// NewClientFromConfig and ValidateConfig serve a configuration in hand
// (ConfigClients), e.g. the one a v1 store carries inline.
func (p *provider[C]) NewClientFromConfig(ctx context.Context, cfg client.Object, scope Scope) (SecretsClient, error) {
	c, err := p.given(cfg)
	if err != nil {
		return nil, err
	}
	return p.def.NewClient(ctx, p.deps, c, scope)
}

// ValidateConfig checks a configuration in hand and resolves its
// credentials, as Validate does one read by ref.
func (p plugin[C]) ValidateConfig(ctx context.Context, cfg client.Object, scope Scope) error {
	c, err := p.given(cfg)
	if err != nil {
		return err
	}
	return p.checkCredentials(ctx, c, scope)
}

// given checks a configuration handed over in place of a ref.
func (p plugin[C]) given(cfg client.Object) (C, error) {
	c, ok := cfg.(C)
	if !ok {
		var zero C
		return zero, fmt.Errorf("%w: a %T is not a %s configuration", ErrInvalidConfig, cfg, p.def.Kind)
	}
	return p.checked(c)
}

// generator is a Definition with Generate, as core calls it.
type generator[C client.Object] struct{ plugin[C] }

func (g *generator[C]) Generate(ctx context.Context, ref Ref, scope Scope) (map[string][]byte, State, error) {
	cfg, err := g.read(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	return g.def.Generate(ctx, g.deps, cfg, scope)
}

// Cleanup reads the configuration only when there is something to revoke.
func (g *generator[C]) Cleanup(ctx context.Context, ref Ref, scope Scope, state State) error {
	if g.def.Cleanup == nil || len(state) == 0 {
		return nil
	}
	cfg, err := g.read(ctx, ref)
	if err != nil {
		return err
	}
	return g.def.Cleanup(ctx, g.deps, cfg, scope, state)
}

// GenerateFromConfig and CleanupFromConfig serve a configuration in hand
// (ConfigGenerator), e.g. the one an upstream generator object translates to.
func (g *generator[C]) GenerateFromConfig(ctx context.Context, cfg client.Object, scope Scope) (map[string][]byte, State, error) {
	c, err := g.given(cfg)
	if err != nil {
		return nil, nil, err
	}
	return g.def.Generate(ctx, g.deps, c, scope)
}

func (g *generator[C]) CleanupFromConfig(ctx context.Context, cfg client.Object, scope Scope, state State) error {
	if g.def.Cleanup == nil || len(state) == 0 {
		return nil
	}
	c, err := g.given(cfg)
	if err != nil {
		return err
	}
	return g.def.Cleanup(ctx, g.deps, c, scope, state)
}
