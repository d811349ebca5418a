package stores

import (
	"context"

	"go.uber.org/fx"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/registry"
)

// Module provides the Resolver and its ClientCache, registers the store
// indexes, and drops cached clients of namespaces being deleted.
var Module = fx.Module("stores",
	fx.Provide(
		NewClientCache,
		func(mgr ctrl.Manager, provs *registry.Providers, clients *ClientCache, cfg config.Config) *Resolver {
			return NewResolver(mgr.GetClient(), provs, clients, cfg.ControllerClass)
		},
	),
	fx.Invoke(func(mgr ctrl.Manager) error { return SetupIndexes(context.Background(), mgr) }),
	fx.Invoke(setupJanitor),
)
