// Package wiring compiles in, by build tag, the providers and generators
// that providers/catalog lists. Its zz_generated files are written from the
// catalog by `make generate` (build/wiring); do not edit them.
//
// The rule: components that need no third-party SDK are always in. Each
// SDK-backed component carries a tag (catalog.Tags). A build with no
// selection tag gets every component; a build with any selection tag gets
// exactly the tagged ones; the tag "minimal" selects none of them.
//
// The upstream v1 store layer (app/v1compat) is compiled in the same way,
// by v1layer.go, unless the tag nov1 leaves it out (v1layer_off.go).
package wiring

import (
	"slices"
	"strings"

	"go.uber.org/fx"

	"github.com/eso-dev/eso/providers/plugin"
)

// tagged is filled by the build-tagged zz_generated files: the components
// of the tags in effect.
var tagged []plugin.Registration

// selected is filled by the build-tagged zz_generated files: the selection
// tags in effect.
var selected []string

// addTagged compiles in the components of tag; the build-tagged
// zz_generated files call it.
func addTagged(tag string, regs []plugin.Registration) {
	selected = append(selected, tag)
	for _, r := range regs {
		r.BuildTag = tag
		tagged = append(tagged, r)
	}
}

// Plugins lists every provider and generator compiled into this binary.
func Plugins() []plugin.Registration {
	return slices.Concat(builtin, tagged)
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

// Module provides the index of the compiled-in plugins and the plugins
// built with their dependencies; a test may decorate the index (say, to
// reach a test server).
func Module() fx.Option {
	return fx.Module("plugins", fx.Provide(
		func() (*plugin.Index, error) { return plugin.NewIndex(Plugins()) },
		plugin.NewPlugins,
	))
}
