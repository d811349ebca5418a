package grpcserver

import (
	"context"
	"crypto/tls"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/logging"
	"github.com/eso-dev/eso/app/registry"
	"github.com/eso-dev/eso/providers/plugin"
)

// Module serves the registry's providers and generators over gRPC for the
// life of the application, with metrics and probes on their usual addresses.
var Module = fx.Module("grpcserver",
	fx.Provide(newServer),
	fx.Invoke(run),
)

func newServer(cfg config.Config, plugins *registry.Plugins, deps plugin.Deps) (*Server, error) {
	return New(Options{
		Plugins:      plugins,
		ConfigReader: deps.APIReader,
		Kinds:        cfg.ProviderKinds,
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
	return NewServerTLSConfig(TLSFiles{CertFile: cfg.TLSCertFile, KeyFile: cfg.TLSKeyFile, ClientCAFile: cfg.TLSClientCAFile},
		DefaultReloadInterval, log)
}

func run(lc fx.Lifecycle, shutdowner fx.Shutdowner, cfg config.Config, s *Server) error {
	log := ctrl.Log.WithName("grpcserver")
	tlsConfig, err := TransportSecurity(cfg, log)
	if err != nil {
		return err
	}
	var running *Running
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			running, err = Start(s, RunOptions{
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
