package stores

import (
	"context"

	"go.uber.org/fx"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/grpcclient"
	"github.com/eso-dev/eso/app/registry"
)

// Module provides the Resolver, its ClientCache and the connections to
// provider processes (shared with generators), registers the store indexes,
// and drops cached clients of namespaces being deleted.
var Module = fx.Module("stores",
	fx.Provide(
		NewClientCache,
		newRemote,
		func(mgr ctrl.Manager, provs *registry.Providers, clients *ClientCache, remote *grpcclient.Remote, cfg config.Config) *Resolver {
			return NewResolver(mgr.GetClient(), provs, clients, cfg.ControllerClass).WithRemote(remote)
		},
	),
	fx.Invoke(func(mgr ctrl.Manager) error { return SetupIndexes(context.Background(), mgr) }),
	fx.Invoke(setupJanitor),
)

// newRemote reads client certificate Secrets straight from the API server:
// eso's cache holds only the Secrets it manages.
func newRemote(mgr ctrl.Manager, cfg config.Config, lc fx.Lifecycle) *grpcclient.Remote {
	remote := grpcclient.New(mgr.GetAPIReader(), grpcclient.Options{Insecure: cfg.RemoteProvidersInsecure})
	lc.Append(fx.StopHook(remote.Close))
	return remote
}
