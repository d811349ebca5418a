// Package app composes eso with go.uber.org/fx: the mode picks which modules
// start. Each module's implementation is usable without fx.
package app

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/controllers/clusterexternalsecret"
	"github.com/eso-dev/eso/app/controllers/clusterpushsecret"
	"github.com/eso-dev/eso/app/controllers/externalsecret"
	"github.com/eso-dev/eso/app/controllers/generator"
	"github.com/eso-dev/eso/app/controllers/generatorstate"
	"github.com/eso-dev/eso/app/controllers/pushsecret"
	"github.com/eso-dev/eso/app/controllers/secretstore"
	"github.com/eso-dev/eso/app/generation"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/provcerts"
	"github.com/eso-dev/eso/app/referents"
	"github.com/eso-dev/eso/app/rollout"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/app/version"
	"github.com/eso-dev/eso/app/wiring"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/sdk/logging"
	"github.com/eso-dev/eso/sdk/server"
)

// CoreModules are the modules of core mode: the manager, the compiled-in
// providers and generators in process, and the controllers.
func CoreModules() fx.Option {
	return fx.Options(
		wiring.Module(),
		manager.Module,
		stores.Module,
		referents.Module,
		generation.Module,
		secretstore.Module,
		externalsecret.Module,
		clusterexternalsecret.Module,
		pushsecret.Module,
		clusterpushsecret.Module,
		generator.Module,
		generatorstate.Module,
		rollout.Module,
		provcerts.Module,
		wiring.V1Layer(),
	)
}

// New returns the application for cfg.Mode. Its error is always a mistake
// of the command line (exit code 2); what fails later, while the
// application is built or started, is not (exit code 1).
func New(cfg config.Config) (*fx.App, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkProviderKinds(cfg.ProviderKinds); err != nil {
		return nil, err
	}
	setupLogging(cfg)
	setGCPercent()
	log := ctrl.Log.WithName("eso")
	log.Info("starting", "mode", cfg.Mode, "version", version.Version, "providers", wiring.Selection())
	if cfg.Mode == config.ModeProvider {
		return newProviderApp(cfg), nil
	}
	return fx.New(
		fx.Supply(cfg),
		fx.WithLogger(func() fxevent.Logger { return fxevent.NopLogger }),
		fx.Provide(manager.RESTConfig),
		CoreModules(),
	), nil
}

// checkProviderKinds refuses a --provider-kinds kind this binary lacks
// before anything starts: config cannot, it does not know the catalog.
func checkProviderKinds(kinds []string) error {
	if len(kinds) == 0 {
		return nil
	}
	idx, err := plugin.NewIndex(wiring.Plugins())
	if err != nil {
		return err
	}
	return server.CheckKinds(idx, kinds)
}

// setupLogging logs at --log-level in --log-format (config.Validate has
// checked both), klog's lines (client-go, leader election) included.
func setupLogging(cfg config.Config) {
	if log, err := logging.Setup(cfg.LogLevel, cfg.LogFormat); err == nil {
		ctrl.SetLogger(log)
	}
}

// component is one row of `eso providers -o json`.
type component struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	// BuildTag is the tag that selects it; empty: always compiled in.
	BuildTag string `json:"buildTag,omitempty"`
}

// PrintProvidersJSON writes the providers and generators compiled into the
// binary as one JSON object, for scripts.
func PrintProvidersJSON(w io.Writer) error {
	out := struct {
		Providers  []component `json:"providers"`
		Generators []component `json:"generators"`
		BuildTags  string      `json:"buildTags"`
	}{Providers: []component{}, Generators: []component{}, BuildTags: wiring.Selection()}
	for _, r := range wiring.Plugins() {
		if r.Role() == plugin.RoleGenerator {
			out.Generators = append(out.Generators, component{r.Name, r.Kind, "provider.generator.external-secrets.io/v2alpha1", r.BuildTag})
		} else {
			out.Providers = append(out.Providers, component{r.Name, r.Kind, "provider.secretstore.external-secrets.io/v2alpha1", r.BuildTag})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// PrintProviders writes every provider, then every generator, compiled
// into the binary.
func PrintProviders(w io.Writer) error {
	catalog, err := plugin.NewIndex(wiring.Plugins())
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tBUILD TAG")
	for _, r := range catalog.Registrations(plugin.RoleProvider) {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.Kind+".provider.secretstore.external-secrets.io/v2alpha1", tagOrAlways(r.BuildTag))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// A table of its own, so the providers' columns do not move.
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nGENERATOR\tKIND\tBUILD TAG")
	for _, r := range catalog.Registrations(plugin.RoleGenerator) {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.Kind+".provider.generator.external-secrets.io/v2alpha1", tagOrAlways(r.BuildTag))
	}
	return tw.Flush()
}

func servedOrNot(served bool) string {
	if served {
		return "served"
	}
	return "not served (built with nov1)"
}

func tagOrAlways(tag string) string {
	if tag == "" {
		return "(always)"
	}
	return tag
}

// PrintVersion writes the build's identity.
func PrintVersion(w io.Writer) {
	fmt.Fprintf(w, "eso %s\ncommit: %s\ngo: %s\nbuild tags: %s\nexternal-secrets.io/v1 stores: %s\n",
		version.Version, version.Commit, version.GoVersion(), wiring.Selection(), servedOrNot(wiring.V1Served))
}
