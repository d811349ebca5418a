package kit

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eso-dev/eso/providers"
)

// Definition is a provider whose configuration objects are of type C (a
// pointer to the API type, e.g. *provv1.Vault): its names and what it does
// with a configuration once read.
type Definition[C client.Object] struct {
	// Name is the short name, e.g. "vault"; Kind the configuration kind.
	Name, Kind string
	// AddToScheme registers the configuration kind; NewConfig returns an
	// empty configuration object.
	AddToScheme func(*runtime.Scheme) error
	NewConfig   func() C
	// Check, if set, rejects a configuration that cannot work whatever the
	// namespace, e.g. inconsistent fields. It runs before Validate's
	// credential check and before every NewClient.
	Check func(cfg C) error
	// CheckCredentials, if set, resolves the credentials cfg references in
	// scope without calling the backend. Validate skips it when the scope
	// has no namespace yet (a ClusterSecretStore whose credentials resolve
	// per request).
	CheckCredentials func(ctx context.Context, deps providers.Deps, cfg C, scope providers.Scope) error
	// NewClient builds a client of cfg bound to scope.
	NewClient func(ctx context.Context, deps providers.Deps, cfg C, scope providers.Scope) (providers.SecretsClient, error)
}

// Registration is d as the registry lists it.
func (d Definition[C]) Registration() providers.Registration {
	return providers.Registration{
		Name:        d.Name,
		Kind:        d.Kind,
		AddToScheme: d.AddToScheme,
		NewConfig:   func() client.Object { return d.NewConfig() },
		New:         d.New,
	}
}

// New builds the provider of d with deps.
func (d Definition[C]) New(deps providers.Deps) providers.Provider {
	return &provider[C]{def: d, deps: deps}
}

type provider[C client.Object] struct {
	def  Definition[C]
	deps providers.Deps
}

func (p *provider[C]) Kind() string { return p.def.Kind }

func (p *provider[C]) Validate(ctx context.Context, ref providers.Ref, scope providers.Scope) error {
	return validate(ctx, p.deps, ref, scope, p.def.NewConfig, p.def.Check, p.def.CheckCredentials)
}

func (p *provider[C]) NewClient(ctx context.Context, ref providers.Ref, scope providers.Scope) (providers.SecretsClient, error) {
	cfg, err := read(ctx, p.deps, ref, p.def.NewConfig, p.def.Check)
	if err != nil {
		return nil, err
	}
	return p.def.NewClient(ctx, p.deps, cfg, scope)
}

func (p *provider[C]) NewClientFromConfig(ctx context.Context, cfg client.Object, scope providers.Scope) (providers.SecretsClient, error) {
	c, err := p.given(cfg)
	if err != nil {
		return nil, err
	}
	return p.def.NewClient(ctx, p.deps, c, scope)
}

func (p *provider[C]) ValidateConfig(ctx context.Context, cfg client.Object, scope providers.Scope) error {
	c, err := p.given(cfg)
	if err != nil || scope.Namespace == "" || p.def.CheckCredentials == nil {
		return err
	}
	return p.def.CheckCredentials(ctx, p.deps, c, scope)
}

// given checks a configuration handed over in place of a ref.
func (p *provider[C]) given(cfg client.Object) (C, error) {
	c, ok := cfg.(C)
	if !ok {
		var zero C
		return zero, fmt.Errorf("%w: a %T is not a %s configuration", providers.ErrInvalidConfig, cfg, p.def.Kind)
	}
	if p.def.Check != nil {
		if err := p.def.Check(c); err != nil {
			var zero C
			return zero, err
		}
	}
	return c, nil
}

// read reads the configuration ref names and runs check (if set) on it:
// what providers and generators share.
func read[C client.Object](ctx context.Context, deps providers.Deps, ref providers.Ref, newConfig func() C, check func(C) error) (C, error) {
	cfg := newConfig()
	if err := providers.ReadConfig(ctx, deps.Client, ref, cfg); err != nil {
		var zero C
		return zero, err
	}
	if check != nil {
		if err := check(cfg); err != nil {
			var zero C
			return zero, err
		}
	}
	return cfg, nil
}

// validate reads and checks the configuration, and resolves its credentials
// once the scope has a namespace.
func validate[C client.Object](ctx context.Context, deps providers.Deps, ref providers.Ref, scope providers.Scope, newConfig func() C,
	check func(C) error, checkCredentials func(context.Context, providers.Deps, C, providers.Scope) error) error {
	cfg, err := read(ctx, deps, ref, newConfig, check)
	if err != nil || scope.Namespace == "" || checkCredentials == nil {
		return err
	}
	return checkCredentials(ctx, deps, cfg, scope)
}
