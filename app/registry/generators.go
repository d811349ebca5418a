package registry

import (
	"go.uber.org/fx"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	byKind, err := index("generator", regs, func(r generators.Registration) identity {
		return identity{r.Name, r.Kind, r.New != nil}
	})
	if err != nil {
		return nil, err
	}
	return &GeneratorCatalog{byKind: byKind}, nil
}

// Registrations lists the compiled-in generators sorted by name.
func (c *GeneratorCatalog) Registrations() []generators.Registration {
	return sortedByName(c.byKind, func(r generators.Registration) string { return r.Name })
}

// Kinds are the configuration kinds of the catalog.
func (c *GeneratorCatalog) Kinds() []string {
	var kinds []string
	for _, r := range c.Registrations() {
		kinds = append(kinds, r.Kind)
	}
	return kinds
}

// NewConfig returns an empty configuration object of kind, or false when no
// compiled-in generator serves kind.
func (c *GeneratorCatalog) NewConfig(kind string) (client.Object, bool) {
	r, ok := c.byKind[kind]
	if !ok {
		return nil, false
	}
	return r.NewConfig(), true
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
