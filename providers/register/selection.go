// Package register compiles in, by build tag, the providers and generators
// that providers/catalog lists. Its zz_generated files are written from the
// catalog by `make generate` (build/wiring); do not edit them.
//
// The rule: components that need no third-party SDK are always in. Each
// SDK-backed component carries a tag (catalog.Tags). A build with no
// selection tag gets every component; a build with any selection tag gets
// exactly the tagged ones; the tag "minimal" selects none of them.
package register

import (
	"slices"
	"strings"

	"go.uber.org/fx"

	"github.com/eso-dev/eso/generators"
	"github.com/eso-dev/eso/providers"
)

// tagged is filled by the build-tagged zz_generated files: the components
// of the tags in effect.
var tagged struct {
	providers  []providers.Registration
	generators []generators.Registration
}

// selected is filled by the build-tagged zz_generated files: the selection
// tags in effect.
var selected []string

// addTagged compiles in the components of tag; the build-tagged
// zz_generated files call it.
func addTagged(tag string, ps []providers.Registration, gs []generators.Registration) {
	selected = append(selected, tag)
	for _, p := range ps {
		p.BuildTag = tag
		tagged.providers = append(tagged.providers, p)
	}
	for _, g := range gs {
		g.BuildTag = tag
		tagged.generators = append(tagged.generators, g)
	}
}

// Providers lists every provider compiled into this binary.
func Providers() []providers.Registration {
	return slices.Concat(builtinProviders, tagged.providers)
}

// Generators lists every generator compiled into this binary.
func Generators() []generators.Registration {
	return slices.Concat(builtinGenerators, tagged.generators)
}

// Selection names the SDK selection this binary was built with, e.g.
// "aws,gcp,vault" or "minimal" when none was selected.
func Selection() string {
	if len(selected) == 0 {
		return "minimal"
	}
	sorted := slices.Clone(selected)
	slices.Sort(sorted)
	return strings.Join(sorted, ",")
}

// Module adds every compiled-in provider to the fx value group "providers"
// and every generator to "generators".
func Module() fx.Option {
	var opts []fx.Option
	for _, r := range Providers() {
		opts = append(opts, fx.Provide(fx.Annotate(
			func() providers.Registration { return r },
			fx.ResultTags(`group:"providers"`),
		)))
	}
	for _, r := range Generators() {
		opts = append(opts, fx.Provide(fx.Annotate(
			func() generators.Registration { return r },
			fx.ResultTags(`group:"generators"`),
		)))
	}
	return fx.Module("providers", opts...)
}
