// Package registry turns the plugins compiled into the binary (the fx value
// group "plugins") into lookups by role and kind. Two plugins of one role
// claiming one kind or name is a build mistake, so it fails at start-up
// rather than picking one.
package registry

import (
	"fmt"
	"slices"
	"strings"

	"go.uber.org/fx"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eso-dev/eso/providers/plugin"
)

// roles are the plugin roles, in the order they are listed.
var roles = []plugin.Role{plugin.RoleProvider, plugin.RoleGenerator}

// Catalog is the set of compiled-in plugins, by role and configuration kind.
type Catalog struct {
	byKind map[plugin.Role]map[string]plugin.Registration
}

// NewCatalog indexes registrations; within a role, a kind or name
// registered twice, or an incomplete registration, is an error.
func NewCatalog(regs []plugin.Registration) (*Catalog, error) {
	c := &Catalog{byKind: map[plugin.Role]map[string]plugin.Registration{}}
	names := map[plugin.Role]map[string]string{}
	for _, role := range roles {
		c.byKind[role], names[role] = map[string]plugin.Registration{}, map[string]string{}
	}
	for _, r := range regs {
		if err := r.Complete(); err != nil {
			return nil, fmt.Errorf("plugin registration %q/%q is incomplete: %w", r.Name, r.Kind, err)
		}
		role := r.Role()
		if prev, dup := c.byKind[role][r.Kind]; dup {
			return nil, fmt.Errorf("%s kind %s is registered twice (%s and %s)", role, r.Kind, prev.Name, r.Name)
		}
		if prev, dup := names[role][r.Name]; dup {
			return nil, fmt.Errorf("%s name %s is registered twice (kinds %s and %s)", role, r.Name, prev, r.Kind)
		}
		c.byKind[role][r.Kind], names[role][r.Name] = r, r.Kind
	}
	return c, nil
}

// Registrations lists the compiled-in plugins of role sorted by name.
func (c *Catalog) Registrations(role plugin.Role) []plugin.Registration {
	out := make([]plugin.Registration, 0, len(c.byKind[role]))
	for _, r := range c.byKind[role] {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b plugin.Registration) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// All lists every compiled-in plugin: the providers, then the generators,
// each sorted by name.
func (c *Catalog) All() []plugin.Registration {
	var out []plugin.Registration
	for _, role := range roles {
		out = append(out, c.Registrations(role)...)
	}
	return out
}

// Lookup returns the registration of role serving a configuration kind.
func (c *Catalog) Lookup(role plugin.Role, kind string) (plugin.Registration, bool) {
	r, ok := c.byKind[role][kind]
	return r, ok
}

// Kinds are the configuration kinds of role, in name order.
func (c *Catalog) Kinds(role plugin.Role) []string {
	var kinds []string
	for _, r := range c.Registrations(role) {
		kinds = append(kinds, r.Kind)
	}
	return kinds
}

// NewConfig returns an empty configuration object of kind, or false when no
// compiled-in plugin of role serves kind.
func (c *Catalog) NewConfig(role plugin.Role, kind string) (client.Object, bool) {
	r, ok := c.byKind[role][kind]
	if !ok {
		return nil, false
	}
	return r.NewConfig(), true
}

// Plugins are the compiled-in plugins, built once with their dependencies.
type Plugins struct {
	catalog    *Catalog
	providers  map[string]plugin.Provider
	generators map[string]plugin.Generator
}

// NewPlugins builds every registered plugin with deps.
func NewPlugins(catalog *Catalog, deps plugin.Deps) *Plugins {
	p := &Plugins{catalog: catalog, providers: map[string]plugin.Provider{}, generators: map[string]plugin.Generator{}}
	for _, r := range catalog.Registrations(plugin.RoleProvider) {
		p.providers[r.Kind] = r.NewProvider(deps)
	}
	for _, r := range catalog.Registrations(plugin.RoleGenerator) {
		p.generators[r.Kind] = r.NewGenerator(deps)
	}
	return p
}

// Provider returns the provider serving a configuration kind.
func (p *Plugins) Provider(kind string) (plugin.Provider, bool) {
	prov, ok := p.providers[kind]
	return prov, ok
}

// Generator returns the generator serving a configuration kind.
func (p *Plugins) Generator(kind string) (plugin.Generator, bool) {
	gen, ok := p.generators[kind]
	return gen, ok
}

// Catalog returns what the plugins were built from.
func (p *Plugins) Catalog() *Catalog { return p.catalog }

// CatalogParams collects the registrations of the fx value group.
type CatalogParams struct {
	fx.In
	Registrations []plugin.Registration `group:"plugins"`
}

// Module provides the Catalog from the "plugins" value group and the built
// Plugins.
var Module = fx.Module("registry",
	fx.Provide(
		func(p CatalogParams) (*Catalog, error) { return NewCatalog(p.Registrations) },
		NewPlugins,
	),
)
