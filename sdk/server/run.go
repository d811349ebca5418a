package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// RunOptions are where a provider process listens and how it protects the
// gRPC port. eso --mode=provider and the public SDK's Serve both run a
// Server through Start, so every provider process behaves the same.
type RunOptions struct {
	// GRPCAddress is the gRPC listen address; Listener, if set, is used
	// instead (tests listen on port 0 and need the address first).
	GRPCAddress string
	Listener    net.Listener
	// MetricsAddress serves Prometheus metrics at /metrics, HealthAddress
	// /healthz and /readyz for kubelet (which cannot speak mTLS gRPC health
	// checks); "" or "0" turns either off.
	MetricsAddress, HealthAddress string
	// TLS is the server's mTLS configuration; nil serves plaintext, which
	// only an explicit insecure setting may ask for.
	TLS *tls.Config
	// Registry receives the gRPC metrics and is what /metrics serves.
	Registry interface {
		prometheus.Registerer
		prometheus.Gatherer
	}
	Log logr.Logger
	// OnFailure is called when a listener stops serving by itself.
	OnFailure func(error)
}

// Running is a Server being served: its gRPC endpoint and the HTTP servers
// of its metrics and probes.
type Running struct {
	endpoint *Endpoint
	http     []*http.Server
}

// Start binds every address now, so a port in use fails start-up, and serves
// s until Stop.
func Start(s *Server, opts RunOptions) (*Running, error) {
	m, err := NewMetrics(opts.Registry)
	if err != nil {
		return nil, err
	}
	serve := ServeOptions{TLS: opts.TLS, Metrics: m, Log: opts.Log}
	var endpoint *Endpoint
	if opts.Listener != nil {
		endpoint = NewEndpoint(opts.Listener, s, serve)
	} else if endpoint, err = Listen(opts.GRPCAddress, s, serve); err != nil {
		return nil, err
	}
	r := &Running{endpoint: endpoint}
	fail := func(err error) {
		if opts.OnFailure != nil {
			opts.OnFailure(err)
		}
	}
	go func() {
		if err := endpoint.Serve(); err != nil {
			opts.Log.Error(err, "gRPC server stopped")
			fail(err)
		}
	}()
	if err := r.startOps(opts, fail); err != nil {
		r.Stop(context.Background())
		return nil, err
	}
	opts.Log.Info("serving", "address", endpoint.Addr().String(), "mtls", opts.TLS != nil,
		"providerKinds", s.ProviderKinds(), "generatorKinds", s.GeneratorKinds())
	return r, nil
}

// Addr is the gRPC listen address.
func (r *Running) Addr() net.Addr { return r.endpoint.Addr() }

// Stop stops the HTTP servers and then the gRPC server, letting calls in
// flight finish (up to the graceful stop timeout), and closes every client.
func (r *Running) Stop(ctx context.Context) error {
	var errs []error
	for _, hs := range r.http {
		errs = append(errs, hs.Shutdown(ctx))
	}
	r.endpoint.Shutdown(ctx)
	return errors.Join(errs...)
}

func (r *Running) startOps(opts RunOptions, fail func(error)) error {
	metricsMux := http.NewServeMux()
	metricsMux.Handle("/metrics", promhttp.HandlerFor(opts.Registry, promhttp.HandlerOpts{}))
	probesMux := http.NewServeMux()
	probesMux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	probesMux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !r.endpoint.Serving() {
			http.Error(w, "not serving", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	for _, ep := range []struct {
		name, addr string
		handler    http.Handler
	}{{"metrics", opts.MetricsAddress, metricsMux}, {"probes", opts.HealthAddress, probesMux}} {
		if ep.addr == "" || ep.addr == "0" {
			continue
		}
		lis, err := net.Listen("tcp", ep.addr)
		if err != nil {
			return fmt.Errorf("%s listener: %w", ep.name, err)
		}
		hs := &http.Server{Handler: ep.handler, ReadHeaderTimeout: 10 * time.Second}
		r.http = append(r.http, hs)
		go func() {
			if err := hs.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
				opts.Log.Error(err, "HTTP server stopped", "server", ep.name)
				fail(err)
			}
		}()
	}
	return nil
}
