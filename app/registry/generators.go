package registry

import (
	"fmt"
	"slices"
	"strings"

	"go.uber.org/fx"

	"github.com/eso-dev/eso/generators"
	"github.com/eso-dev/eso/providers"
)

// GeneratorCatalog is the set of compiled-in generators, by configuration kind.
type GeneratorCatalog struct {
	byKind map[string]generators.Registration
}

// NewGeneratorCatalog indexes registrations; a kind or name registered twice
// is an error.
func NewGeneratorCatalog(regs []generators.Registration) (*GeneratorCatalog, error) {
	c := &GeneratorCatalog{byKind: make(map[string]generators.Registration, len(regs))}
	names := map[string]string{}
	for _, r := range regs {
		if r.Kind == "" || r.Name == "" || r.New == nil {
			return nil, fmt.Errorf("generator registration %q/%q is incomplete", r.Name, r.Kind)
		}
		if prev, dup := c.byKind[r.Kind]; dup {
			return nil, fmt.Errorf("generator kind %s is registered twice (%s and %s)", r.Kind, prev.Name, r.Name)
		}
		if prev, dup := names[r.Name]; dup {
			return nil, fmt.Errorf("generator name %s is registered twice (kinds %s and %s)", r.Name, prev, r.Kind)
		}
		c.byKind[r.Kind], names[r.Name] = r, r.Kind
	}
	return c, nil
}

// Registrations lists the compiled-in generators sorted by name.
func (c *GeneratorCatalog) Registrations() []generators.Registration {
	out := make([]generators.Registration, 0, len(c.byKind))
	for _, r := range c.byKind {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b generators.Registration) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Generators are the compiled-in generators, built once with their dependencies.
type Generators struct {
	catalog *GeneratorCatalog
	byKind  map[string]generators.Generator
}

// NewGenerators builds every registered generator with deps.
func NewGenerators(catalog *GeneratorCatalog, deps providers.Deps) *Generators {
	g := &Generators{catalog: catalog, byKind: map[string]generators.Generator{}}
	for _, r := range catalog.Registrations() {
		g.byKind[r.Kind] = r.New(deps)
	}
	return g
}

// Lookup returns the generator serving a configuration kind.
func (g *Generators) Lookup(kind string) (generators.Generator, bool) {
	gen, ok := g.byKind[kind]
	return gen, ok
}

// Catalog returns what the generators were built from.
func (g *Generators) Catalog() *GeneratorCatalog { return g.catalog }

// GeneratorCatalogParams collects the generator registrations of the fx value group.
type GeneratorCatalogParams struct {
	fx.In
	Registrations []generators.Registration `group:"generators"`
}

// GeneratorsModule provides the GeneratorCatalog from the "generators" value
// group and the built Generators.
var GeneratorsModule = fx.Module("generator-registry",
	fx.Provide(
		func(p GeneratorCatalogParams) (*GeneratorCatalog, error) { return NewGeneratorCatalog(p.Registrations) },
		NewGenerators,
	),
)
