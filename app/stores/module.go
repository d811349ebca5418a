package stores

import (
	"context"

	"go.uber.org/fx"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/grpcclient"
	"github.com/eso-dev/eso/app/provcerts"
	"github.com/eso-dev/eso/providers/plugin"
)

// Module provides the Resolver, its ClientCache and the connections to
// provider processes (shared with generators), registers the store indexes,
// and drops cached clients of namespaces being deleted.
var Module = fx.Module("stores",
	fx.Provide(
		NewClientCache,
		newRemote,
		func(mgr ctrl.Manager, plugins *plugin.Plugins, clients *ClientCache, remote *grpcclient.Remote, cfg config.Config, more moreAPIs) *Resolver {
			return NewResolver(mgr.GetClient(), plugins, clients, cfg.ControllerClass).WithRemote(remote).WithAPIs(more.APIs...).
				WithWatchedNamespaces(cfg.Namespaces())
		},
	),
	fx.Invoke(func(mgr ctrl.Manager) error { return SetupIndexes(context.Background(), mgr) }),
	fx.Invoke(setupJanitor),
)

// moreAPIs are the store kinds optional modules serve (fx value group
// "storeapis"): the v1 compatibility layer's.
type moreAPIs struct {
	fx.In
	APIs []API `group:"storeapis"`
}

// newRemote reads client certificate Secrets straight from the API server:
// eso's cache holds only the Secrets it manages.
func newRemote(mgr ctrl.Manager, cfg config.Config, lc fx.Lifecycle) *grpcclient.Remote {
	opts := grpcclient.Options{Insecure: cfg.RemoteProvidersInsecure}
	if cfg.ProviderCertsNamespace != "" {
		opts.CoreCertificate = &types.NamespacedName{Namespace: cfg.ProviderCertsNamespace, Name: provcerts.CoreClientSecret}
	}
	remote := grpcclient.New(mgr.GetAPIReader(), opts)
	lc.Append(fx.StopHook(remote.Close))
	return remote
}
