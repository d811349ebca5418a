// Package registry turns the providers and generators compiled into the
// binary (fx value groups) into lookups by kind. Two claiming one kind is a
// build mistake, so it fails at start-up rather than picking one.
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
	byKind, err := index("provider", regs, func(r providers.Registration) identity {
		return identity{r.Name, r.Kind, r.New != nil}
	})
	if err != nil {
		return nil, err
	}
	return &Catalog{byKind: byKind}, nil
}

// Registrations lists the compiled-in providers sorted by name.
func (c *Catalog) Registrations() []providers.Registration {
	return sortedByName(c.byKind, func(r providers.Registration) string { return r.Name })
}

// identity is what index needs of a registration.
type identity struct {
	name, kind string
	complete   bool
}

// index maps registrations by kind. A kind or name registered twice, or an
// incomplete registration, is a build mistake and an error.
func index[R any](what string, regs []R, id func(R) identity) (map[string]R, error) {
	byKind := make(map[string]R, len(regs))
	names := map[string]string{}
	for _, r := range regs {
		i := id(r)
		if i.kind == "" || i.name == "" || !i.complete {
			return nil, fmt.Errorf("%s registration %q/%q is incomplete", what, i.name, i.kind)
		}
		if prev, dup := byKind[i.kind]; dup {
			return nil, fmt.Errorf("%s kind %s is registered twice (%s and %s)", what, i.kind, id(prev).name, i.name)
		}
		if prev, dup := names[i.name]; dup {
			return nil, fmt.Errorf("%s name %s is registered twice (kinds %s and %s)", what, i.name, prev, i.kind)
		}
		byKind[i.kind], names[i.name] = r, i.kind
	}
	return byKind, nil
}

// sortedByName lists registrations in name order, for stable output.
func sortedByName[R any](byKind map[string]R, name func(R) string) []R {
	out := make([]R, 0, len(byKind))
	for _, r := range byKind {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b R) int { return strings.Compare(name(a), name(b)) })
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

// Kinds are the configuration kinds of the catalog.
func (c *Catalog) Kinds() []string {
	var kinds []string
	for _, r := range c.Registrations() {
		kinds = append(kinds, r.Kind)
	}
	return kinds
}
