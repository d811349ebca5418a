package providermode

import (
	"context"
	"crypto/tls"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/version"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/sdk/logging"
	"github.com/eso-dev/eso/sdk/server"
)

// Module serves the compiled-in providers and generators over gRPC for the
// life of the application, with metrics and probes on their usual
// addresses: the server of package sdk/server, configured from eso's flags.
var Module = fx.Module("grpcserver",
	fx.Provide(newServer),
	fx.Invoke(run),
)

func newServer(cfg config.Config, plugins *plugin.Plugins, deps plugin.Deps) (*server.Server, error) {
	return server.New(server.Options{
		Plugins:      plugins,
		ConfigReader: deps.APIReader,
		Kinds:        cfg.ProviderKinds,
		Version:      version.Version,
		Log:          ctrl.Log.WithName("grpcserver"),
	})
}

// TransportSecurity is the server's TLS configuration from cfg, or nil for
// plaintext when --insecure was given, which it warns about.
func TransportSecurity(cfg config.Config, log logr.Logger) (*tls.Config, error) {
	if cfg.Insecure {
		// A warning (hidden only by --log-level=error).
		logging.Warn(log, "serving plaintext gRPC without client authentication (--insecure): "+
			"anyone who reaches this port can read every secret the served configurations can")
		return nil, nil
	}
	return server.NewServerTLSConfig(server.TLSFiles{CertFile: cfg.TLSCertFile, KeyFile: cfg.TLSKeyFile, ClientCAFile: cfg.TLSClientCAFile},
		server.DefaultReloadInterval, log)
}

func run(lc fx.Lifecycle, shutdowner fx.Shutdowner, cfg config.Config, s *server.Server) error {
	log := ctrl.Log.WithName("grpcserver")
	tlsConfig, err := TransportSecurity(cfg, log)
	if err != nil {
		return err
	}
	var running *server.Running
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			running, err = server.Start(s, server.RunOptions{
				GRPCAddress:    cfg.GRPCAddr,
				MetricsAddress: cfg.MetricsAddr,
				HealthAddress:  cfg.HealthAddr,
				TLS:            tlsConfig,
				Registry:       ctrlmetrics.Registry,
				Log:            log,
				OnFailure:      func(error) { _ = shutdowner.Shutdown(fx.ExitCode(1)) },
			})
			return err
		},
		OnStop: func(ctx context.Context) error {
			if running == nil {
				return nil
			}
			return running.Stop(ctx)
		},
	})
	return nil
}
