package generation

import (
	"go.uber.org/fx"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/grpcclient"
	"github.com/eso-dev/eso/providers/plugin"
)

// Module provides the generatorRef Resolver and the Runner of rotations.
var Module = fx.Module("generation",
	fx.Provide(
		// The connections to provider processes are the stores module's,
		// shared with stores.
		func(mgr ctrl.Manager, plugins *plugin.Plugins, remote *grpcclient.Remote, cfg config.Config, upstream upstreamKinds) *Resolver {
			return NewResolver(mgr.GetClient(), plugins, cfg.ControllerClass).WithRemote(remote).WithUpstream(upstream.Kinds)
		},
		func(mgr ctrl.Manager, cfg config.Config) *Signer {
			return &Signer{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespace: cfg.SystemNamespace}
		},
		func(mgr ctrl.Manager, resolver *Resolver, signer *Signer) *Runner {
			return &Runner{Client: mgr.GetClient(), Resolver: resolver, Signer: signer}
		},
	),
)

// upstreamKinds are upstream's generator kinds this binary serves (value
// group "upstreamgenerators"): the v1 compatibility layer's.
type upstreamKinds struct {
	fx.In
	Kinds []UpstreamKind `group:"upstreamgenerators"`
}
