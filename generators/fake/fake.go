// Package fake is a generator that returns the data its configuration
// holds, for tests and demos: no SDK, in every build.
package fake

import (
	"context"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// Registration wires the generator into every binary. Its data has no
// state: there is nothing to revoke.
var Registration = plugin.Definition[*genv1.Fake]{
	Name: "fake", Kind: "Fake",
	Generate: func(_ context.Context, _ plugin.Deps, cfg *genv1.Fake, _ plugin.Scope) (map[string][]byte, plugin.State, error) {
		out := make(map[string][]byte, len(cfg.Spec.Data))
		for k, v := range cfg.Spec.Data {
			out[k] = []byte(v)
		}
		return out, nil, nil
	},
}.Registration()
