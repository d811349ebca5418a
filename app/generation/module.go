package generation

import (
	"go.uber.org/fx"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/registry"
)

// Module provides the generatorRef Resolver and the Runner of rotations.
var Module = fx.Module("generation",
	fx.Provide(
		func(mgr ctrl.Manager, gens *registry.Generators, cfg config.Config) *Resolver {
			return NewResolver(mgr.GetClient(), gens, cfg.ControllerClass)
		},
		func(mgr ctrl.Manager, resolver *Resolver) *Runner {
			return &Runner{Client: mgr.GetClient(), Resolver: resolver}
		},
	),
)
