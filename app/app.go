// Package app composes eso with go.uber.org/fx: the mode picks which modules
// start. Each module's implementation is usable without fx.
package app

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/go-logr/zapr"
	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/controllers/clusterexternalsecret"
	"github.com/eso-dev/eso/app/controllers/externalsecret"
	"github.com/eso-dev/eso/app/controllers/generator"
	"github.com/eso-dev/eso/app/controllers/generatorstate"
	"github.com/eso-dev/eso/app/controllers/secretstore"
	"github.com/eso-dev/eso/app/generation"
	"github.com/eso-dev/eso/app/logging"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/provcerts"
	"github.com/eso-dev/eso/app/registry"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/app/version"
	"github.com/eso-dev/eso/providers/register"
)

// CoreModules are the modules of core mode: the manager, the compiled-in
// providers and generators in process, and the controllers.
func CoreModules() fx.Option {
	return fx.Options(
		register.Module(),
		registry.Module,
		registry.GeneratorsModule,
		manager.Module,
		stores.Module,
		generation.Module,
		secretstore.Module,
		externalsecret.Module,
		clusterexternalsecret.Module,
		generator.Module,
		generatorstate.Module,
		provcerts.Module,
	)
}

// New returns the application for cfg.Mode.
func New(cfg config.Config) (*fx.App, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	setupLogging(cfg)
	log := ctrl.Log.WithName("eso")
	log.Info("starting", "mode", cfg.Mode, "version", version.Version, "providers", register.Selection())
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

// setupLogging logs at --log-level in --log-format. Stack traces are kept
// for panics: an expected error (a provider refusing, an API conflict) is
// one line, not a page.
func setupLogging(cfg config.Config) {
	opts := zap.Options{StacktraceLevel: zapcore.PanicLevel}
	if cfg.LogFormat != "json" {
		opts.NewEncoder = func(o ...zap.EncoderConfigOption) zapcore.Encoder {
			ec := uberzap.NewProductionEncoderConfig()
			ec.EncodeTime = zapcore.ISO8601TimeEncoder
			for _, f := range o {
				f(&ec)
			}
			return zapcore.NewConsoleEncoder(ec)
		}
	}
	switch cfg.LogLevel {
	case "debug":
		opts.Level = zapcore.DebugLevel
	case "error":
		opts.Level = zapcore.ErrorLevel
	default:
		opts.Level = zapcore.InfoLevel
	}
	zl := zap.NewRaw(zap.UseFlagOptions(&opts))
	ctrl.SetLogger(zapr.NewLogger(zl))
	logging.SetWarner(zl.Sugar().Warnw)
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
	}{Providers: []component{}, Generators: []component{}, BuildTags: register.Selection()}
	for _, r := range register.Providers() {
		out.Providers = append(out.Providers, component{r.Name, r.Kind, "provider.secretstore.external-secrets.io/v2alpha1", r.BuildTag})
	}
	for _, r := range register.Generators() {
		out.Generators = append(out.Generators, component{r.Name, r.Kind, "provider.generator.external-secrets.io/v2alpha1", r.BuildTag})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// PrintProviders writes every provider, then every generator, compiled
// into the binary.
func PrintProviders(w io.Writer) error {
	catalog, err := registry.NewCatalog(register.Providers())
	if err != nil {
		return err
	}
	genCatalog, err := registry.NewGeneratorCatalog(register.Generators())
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tBUILD TAG")
	for _, r := range catalog.Registrations() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.Kind+".provider.secretstore.external-secrets.io/v2alpha1", tagOrAlways(r.BuildTag))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// A table of its own, so the providers' columns do not move.
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nGENERATOR\tKIND\tBUILD TAG")
	for _, r := range genCatalog.Registrations() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.Kind+".provider.generator.external-secrets.io/v2alpha1", tagOrAlways(r.BuildTag))
	}
	return tw.Flush()
}

func tagOrAlways(tag string) string {
	if tag == "" {
		return "(always)"
	}
	return tag
}

// PrintVersion writes the build's identity.
func PrintVersion(w io.Writer) {
	fmt.Fprintf(w, "eso %s\ncommit: %s\ngo: %s\nbuild tags: %s\n", version.Version, version.Commit, version.GoVersion(), register.Selection())
}
