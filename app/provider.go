package app

import (
	"fmt"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/providermode"
	"github.com/eso-dev/eso/app/wiring"
	"github.com/eso-dev/eso/providers/plugin"
)

// ProviderModules are the modules of provider mode: the compiled-in
// providers and generators served over gRPC. No manager, controllers, leader
// election or watches: the process only answers core's calls.
func ProviderModules() fx.Option {
	return fx.Options(
		wiring.Module(),
		fx.Provide(manager.NewScheme, ProviderModeDeps),
		providermode.Module,
	)
}

// ProviderModeDeps gives the providers a plain Kubernetes client: every read
// goes to the API server, and nothing is watched or cached, so the process
// needs only get on what it reads (its configuration kinds, the Secrets and
// ConfigMaps they reference) and create on serviceaccounts/token.
func ProviderModeDeps(cfg config.Config, rc *rest.Config, scheme *runtime.Scheme) (plugin.Deps, error) {
	rc = manager.WithClientLimits(rc, cfg, "eso-provider")
	c, err := client.New(rc, client.Options{Scheme: scheme})
	if err != nil {
		return plugin.Deps{}, fmt.Errorf("creating Kubernetes client: %w", err)
	}
	return plugin.Deps{Client: c, APIReader: c, RESTConfig: rc, AmbientCredentials: cfg.AllowAmbientCredentials}, nil
}

// newProviderApp is the application of --mode=provider.
func newProviderApp(cfg config.Config) *fx.App {
	return fx.New(
		fx.Supply(cfg),
		fx.WithLogger(func() fxevent.Logger { return fxevent.NopLogger }),
		fx.Provide(manager.RESTConfig),
		ProviderModules(),
	)
}
