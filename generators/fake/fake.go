// Package fake is a generator that returns the data its configuration
// holds, for tests and demos: no SDK, in every build.
package fake

import (
	"context"
	"fmt"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// MaxKeys bounds the data of one configuration, as the schema does.
const MaxKeys = 256

// Registration wires the generator into every binary. Its data has no
// state: there is nothing to revoke.
var Registration = plugin.Definition[*genv1.Fake]{
	Name: "fake", Kind: "Fake",
	// The schema bounds the keys too; this covers a configuration that
	// reaches the generator otherwise.
	Check: func(cfg *genv1.Fake) error {
		if n := len(cfg.Spec.Data); n > MaxKeys {
			return fmt.Errorf("%w: data has %d keys, at most %d", plugin.ErrInvalidConfig, n, MaxKeys)
		}
		return nil
	},
	Generate: func(_ context.Context, _ plugin.Deps, cfg *genv1.Fake, _ plugin.Scope) (map[string][]byte, plugin.State, error) {
		out := make(map[string][]byte, len(cfg.Spec.Data))
		for k, v := range cfg.Spec.Data {
			out[k] = []byte(v)
		}
		return out, nil, nil
	},
}.Registration()
