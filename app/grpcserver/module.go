package grpcserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/fx"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/registry"
	"github.com/eso-dev/eso/providers"
)

// Module serves the registry's providers and generators over gRPC for the
// life of the application, with metrics and probes on their usual addresses.
var Module = fx.Module("grpcserver",
	fx.Provide(newServer),
	fx.Invoke(run),
)

func newServer(cfg config.Config, provs *registry.Providers, gens *registry.Generators, deps providers.Deps) (*Server, error) {
	return New(Options{
		Providers:    provs,
		Generators:   gens,
		ConfigReader: deps.APIReader,
		Kinds:        cfg.ProviderKinds,
		Log:          ctrl.Log.WithName("grpcserver"),
	})
}

// TransportSecurity is the server's TLS configuration from cfg, or nil for
// plaintext when --insecure was given, which it warns about.
func TransportSecurity(cfg config.Config, log logr.Logger) (*tls.Config, error) {
	if cfg.Insecure {
		// At error level, so --log-level=error does not hide it.
		log.Error(nil, "WARNING: serving plaintext gRPC without client authentication (--insecure): "+
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
	m, err := NewMetrics(ctrlmetrics.Registry)
	if err != nil {
		return err
	}
	var endpoint *Endpoint
	var httpServers []*http.Server
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			var err error
			if endpoint, err = Listen(cfg.GRPCAddr, s, ServeOptions{TLS: tlsConfig, Metrics: m, Log: log}); err != nil {
				return err
			}
			log.Info("serving", "address", endpoint.Addr().String(), "mtls", tlsConfig != nil,
				"providerKinds", s.ProviderKinds(), "generatorKinds", s.GeneratorKinds())
			go func() {
				if err := endpoint.Serve(); err != nil {
					log.Error(err, "gRPC server stopped")
					_ = shutdowner.Shutdown(fx.ExitCode(1))
				}
			}()
			if httpServers, err = startOps(cfg, endpoint, log, shutdowner); err != nil {
				// fx does not stop a hook whose start failed.
				for _, hs := range httpServers {
					_ = hs.Close()
				}
				endpoint.Shutdown(ctx)
				return err
			}
			return nil
		},
		OnStop: func(ctx context.Context) error {
			var errs []error
			for _, hs := range httpServers {
				errs = append(errs, hs.Shutdown(ctx))
			}
			if endpoint != nil {
				endpoint.Shutdown(ctx)
			}
			return errors.Join(errs...)
		},
	})
	return nil
}

// startOps serves Prometheus metrics and the HTTP probes kubelet uses (it
// cannot speak mTLS gRPC health checks). "0" turns either off.
func startOps(cfg config.Config, endpoint *Endpoint, log logr.Logger, shutdowner fx.Shutdowner) ([]*http.Server, error) {
	metricsMux := http.NewServeMux()
	metricsMux.Handle("/metrics", promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{}))
	probesMux := http.NewServeMux()
	probesMux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	probesMux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !endpoint.Serving() {
			http.Error(w, "not serving", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	var servers []*http.Server
	for _, ep := range []struct {
		name, addr string
		handler    http.Handler
	}{{"metrics", cfg.MetricsAddr, metricsMux}, {"probes", cfg.HealthAddr, probesMux}} {
		if ep.addr == "0" {
			continue
		}
		lis, err := net.Listen("tcp", ep.addr)
		if err != nil {
			return servers, fmt.Errorf("%s listener: %w", ep.name, err)
		}
		hs := &http.Server{Handler: ep.handler, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, hs)
		go func() {
			if err := hs.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
				log.Error(err, "HTTP server stopped", "server", ep.name)
				_ = shutdowner.Shutdown(fx.ExitCode(1))
			}
		}()
	}
	return servers, nil
}
