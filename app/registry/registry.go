// Package registry turns the providers compiled into the binary (an fx value
// group) into a lookup by kind. Two providers claiming one kind is a build
// mistake, so it fails at start-up rather than picking one.
package registry

import (
	"fmt"
	"slices"
	"strings"

	"go.uber.org/fx"

	"github.com/eso-dev/eso/providers"
)

// Catalog is the set of compiled-in providers, by configuration kind.
type Catalog struct {
	byKind map[string]providers.Registration
}

// NewCatalog indexes registrations; a kind or name registered twice is an error.
func NewCatalog(regs []providers.Registration) (*Catalog, error) {
	c := &Catalog{byKind: make(map[string]providers.Registration, len(regs))}
	names := map[string]string{}
	for _, r := range regs {
		if r.Kind == "" || r.Name == "" || r.New == nil {
			return nil, fmt.Errorf("provider registration %q/%q is incomplete", r.Name, r.Kind)
		}
		if prev, dup := c.byKind[r.Kind]; dup {
			return nil, fmt.Errorf("provider kind %s is registered twice (%s and %s)", r.Kind, prev.Name, r.Name)
		}
		if prev, dup := names[r.Name]; dup {
			return nil, fmt.Errorf("provider name %s is registered twice (kinds %s and %s)", r.Name, prev, r.Kind)
		}
		c.byKind[r.Kind], names[r.Name] = r, r.Kind
	}
	return c, nil
}

// Registrations lists the compiled-in providers sorted by name.
func (c *Catalog) Registrations() []providers.Registration {
	out := make([]providers.Registration, 0, len(c.byKind))
	for _, r := range c.byKind {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b providers.Registration) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup returns the registration of a configuration kind.
func (c *Catalog) Lookup(kind string) (providers.Registration, bool) {
	r, ok := c.byKind[kind]
	return r, ok
}

// Providers are the compiled-in providers, built once with their dependencies.
type Providers struct {
	catalog *Catalog
	byKind  map[string]providers.Provider
}

// NewProviders builds every registered provider with deps.
func NewProviders(catalog *Catalog, deps providers.Deps) *Providers {
	p := &Providers{catalog: catalog, byKind: map[string]providers.Provider{}}
	for _, r := range catalog.Registrations() {
		p.byKind[r.Kind] = r.New(deps)
	}
	return p
}

// Lookup returns the provider serving a configuration kind.
func (p *Providers) Lookup(kind string) (providers.Provider, bool) {
	prov, ok := p.byKind[kind]
	return prov, ok
}

// Catalog returns what the providers were built from.
func (p *Providers) Catalog() *Catalog { return p.catalog }

// CatalogParams collects the provider registrations of the fx value group.
type CatalogParams struct {
	fx.In
	Registrations []providers.Registration `group:"providers"`
}

// Module provides the Catalog from the "providers" value group and the built Providers.
var Module = fx.Module("registry",
	fx.Provide(
		func(p CatalogParams) (*Catalog, error) { return NewCatalog(p.Registrations) },
		NewProviders,
	),
)
