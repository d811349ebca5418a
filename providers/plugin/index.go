package plugin

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Index and Plugins turn the plugins compiled into a binary into lookups by
// role and kind. Two plugins of one role claiming one kind or name is a
// build mistake, so it fails at start-up rather than picking one.

// roles are the plugin roles, in the order they are listed.
var roles = []Role{RoleProvider, RoleGenerator}

// Index is the set of compiled-in plugins, by role and configuration kind.
type Index struct {
	byKind map[Role]map[string]Registration
}

// NewIndex indexes registrations; within a role, a kind or name
// registered twice, or an incomplete registration, is an error.
func NewIndex(regs []Registration) (*Index, error) {
	c := &Index{byKind: map[Role]map[string]Registration{}}
	names := map[Role]map[string]string{}
	for _, role := range roles {
		c.byKind[role], names[role] = map[string]Registration{}, map[string]string{}
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
func (c *Index) Registrations(role Role) []Registration {
	out := make([]Registration, 0, len(c.byKind[role]))
	for _, r := range c.byKind[role] {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Registration) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// All lists every compiled-in plugin: the providers, then the generators,
// each sorted by name.
func (c *Index) All() []Registration {
	var out []Registration
	for _, role := range roles {
		out = append(out, c.Registrations(role)...)
	}
	return out
}

// Lookup returns the registration of role serving a configuration kind.
func (c *Index) Lookup(role Role, kind string) (Registration, bool) {
	r, ok := c.byKind[role][kind]
	return r, ok
}

// Kinds are the configuration kinds of role, in name order.
func (c *Index) Kinds(role Role) []string {
	var kinds []string
	for _, r := range c.Registrations(role) {
		kinds = append(kinds, r.Kind)
	}
	return kinds
}

// NewConfig returns an empty configuration object of kind, or false when no
// compiled-in plugin of role serves kind.
func (c *Index) NewConfig(role Role, kind string) (client.Object, bool) {
	r, ok := c.byKind[role][kind]
	if !ok {
		return nil, false
	}
	return r.NewConfig(), true
}

// Plugins are the compiled-in plugins, built once with their dependencies.
type Plugins struct {
	index      *Index
	providers  map[string]Provider
	generators map[string]Generator
}

// NewPlugins builds every registered plugin with deps.
func NewPlugins(index *Index, deps Deps) *Plugins {
	p := &Plugins{index: index, providers: map[string]Provider{}, generators: map[string]Generator{}}
	for _, r := range index.Registrations(RoleProvider) {
		p.providers[r.Kind] = r.NewProvider(deps)
	}
	for _, r := range index.Registrations(RoleGenerator) {
		p.generators[r.Kind] = r.NewGenerator(deps)
	}
	return p
}

// Provider returns the provider serving a configuration kind.
func (p *Plugins) Provider(kind string) (Provider, bool) {
	prov, ok := p.providers[kind]
	return prov, ok
}

// Generator returns the generator serving a configuration kind.
func (p *Plugins) Generator(kind string) (Generator, bool) {
	gen, ok := p.generators[kind]
	return gen, ok
}

// Index returns what the plugins were built from.
func (p *Plugins) Index() *Index { return p.index }
