package sdk

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/sdk/logging"
	"github.com/eso-dev/eso/sdk/server"
)

// Options say where a provider process listens, how it authenticates its
// callers, and how it reaches Kubernetes.
type Options struct {
	// GRPCAddress defaults to ":8443"; Listener, if set, is used instead.
	GRPCAddress string
	Listener    net.Listener
	// MetricsAddress (Prometheus /metrics) and HealthAddress (/healthz,
	// /readyz); empty or "0" turns either off.
	MetricsAddress, HealthAddress string
	// TLSCertFile, TLSKeyFile and TLSClientCAFile are the server's
	// certificate and the CA of its callers' certificates (a mounted
	// cert-manager Secret or one eso issued); they are re-read when they
	// change. Serving plaintext needs Insecure, and never mixes with them.
	TLSCertFile, TLSKeyFile, TLSClientCAFile string
	Insecure                                 bool
	// Kubernetes reads the configuration objects and the credentials
	// Secrets they reference; nil builds one from KubeConfig (a kubeconfig
	// file, or in-cluster configuration when empty).
	Kubernetes client.Client
	KubeConfig string
	// Kinds, if set, are the only configuration kinds served; a kind no
	// provider serves is an error.
	Kinds []string
	Log   logr.Logger
}

// Server is a provider process bound to its addresses.
type Server struct {
	running *server.Running
}

// Listen binds the addresses of opts and starts serving the providers.
func Listen(opts Options, provs ...Registrar) (*Server, error) {
	if len(provs) == 0 {
		return nil, errors.New("sdk: no provider to serve")
	}
	tlsFiles := server.TLSFiles{CertFile: opts.TLSCertFile, KeyFile: opts.TLSKeyFile, ClientCAFile: opts.TLSClientCAFile}
	switch {
	case opts.Insecure && tlsFiles != (server.TLSFiles{}):
		return nil, errors.New("sdk: Insecure serves plaintext and cannot be combined with TLS files")
	case !opts.Insecure && (tlsFiles.CertFile == "" || tlsFiles.KeyFile == "" || tlsFiles.ClientCAFile == ""):
		return nil, errors.New("sdk: a provider serves mTLS only and needs TLSCertFile, TLSKeyFile and TLSClientCAFile; set Insecure to serve plaintext")
	}
	if opts.GRPCAddress == "" {
		opts.GRPCAddress = ":8443"
	}
	log := opts.Log
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	kube := opts.Kubernetes
	if kube == nil {
		var err error
		if kube, err = kubernetesClient(opts.KubeConfig); err != nil {
			return nil, err
		}
	}
	var regs []plugin.Registration
	for _, p := range provs {
		regs = append(regs, p.Registration())
	}
	index, err := plugin.NewIndex(regs)
	if err != nil {
		return nil, err
	}
	deps := plugin.Deps{Client: kube, APIReader: kube}
	srv, err := server.New(server.Options{
		Plugins:      plugin.NewPlugins(index, deps),
		ConfigReader: kube,
		Kinds:        opts.Kinds,
		Log:          log,
	})
	if err != nil {
		return nil, err
	}
	var tlsConfig *tls.Config // nil: plaintext
	if !opts.Insecure {
		if tlsConfig, err = server.NewServerTLSConfig(tlsFiles, server.DefaultReloadInterval, log); err != nil {
			return nil, err
		}
	} else {
		logging.Warn(log, "serving plaintext gRPC without client authentication (Insecure): anyone who reaches this port can read every secret the served configurations can")
	}
	running, err := server.Start(srv, server.RunOptions{
		GRPCAddress:    opts.GRPCAddress,
		Listener:       opts.Listener,
		MetricsAddress: opts.MetricsAddress,
		HealthAddress:  opts.HealthAddress,
		TLS:            tlsConfig,
		Registry:       newRegistry(),
		Log:            log,
	})
	if err != nil {
		return nil, err
	}
	return &Server{running: running}, nil
}

// metricsRegistry holds the process's gRPC metrics and serves them with eso's
// provider metrics (logins, errors by class), which live in the
// controller-runtime registry every eso process shares.
type metricsRegistry struct {
	prometheus.Registerer
	prometheus.Gatherer
}

func newRegistry() metricsRegistry {
	own := prometheus.NewRegistry()
	return metricsRegistry{Registerer: own, Gatherer: prometheus.Gatherers{own, ctrlmetrics.Registry}}
}

// Addr is the gRPC address the server listens on.
func (s *Server) Addr() net.Addr { return s.running.Addr() }

// Stop stops serving, letting calls in flight finish, and closes every
// client.
func (s *Server) Stop(ctx context.Context) error { return s.running.Stop(ctx) }

// Serve serves the providers until ctx is done, then stops gracefully.
func Serve(ctx context.Context, opts Options, provs ...Registrar) error {
	s, err := Listen(opts, provs...)
	if err != nil {
		return err
	}
	<-ctx.Done()
	return s.Stop(context.WithoutCancel(ctx))
}

// Main is a provider process's whole main function: it reads eso's
// provider-mode flags (--grpc-bind-address, --metrics-bind-address,
// --health-probe-bind-address, --tls-cert-file, --tls-key-file,
// --tls-client-ca-file, --insecure, --kubeconfig, --provider-kinds,
// --log-level, --log-format, and --mode=provider, so charts/eso-provider
// runs it as it runs eso), serves the providers until SIGTERM or SIGINT,
// and exits.
func Main(provs ...Registrar) {
	opts, err := parseFlags(os.Args[0], os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := Serve(ctx, opts, provs...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// parseFlags reads the command line of a provider process.
func parseFlags(name string, args []string) (Options, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	opts := Options{}
	fs.StringVar(&opts.GRPCAddress, "grpc-bind-address", ":8443", "address of the gRPC server")
	fs.StringVar(&opts.MetricsAddress, "metrics-bind-address", ":8080", `address of /metrics; "0" turns it off`)
	fs.StringVar(&opts.HealthAddress, "health-probe-bind-address", ":8081", `address of /healthz and /readyz; "0" turns them off`)
	fs.StringVar(&opts.TLSCertFile, "tls-cert-file", "", "the server's certificate (PEM)")
	fs.StringVar(&opts.TLSKeyFile, "tls-key-file", "", "the server's private key (PEM)")
	fs.StringVar(&opts.TLSClientCAFile, "tls-client-ca-file", "", "the CA of the callers' client certificates (PEM)")
	fs.BoolVar(&opts.Insecure, "insecure", false, "serve plaintext gRPC without client authentication")
	fs.StringVar(&opts.KubeConfig, "kubeconfig", "", "kubeconfig file; empty uses $KUBECONFIG, in-cluster config, then ~/.kube/config")
	mode := fs.String("mode", "provider", "always provider: accepted so eso's provider chart runs this process")
	kinds := fs.String("provider-kinds", "", "comma-separated configuration kinds to serve (default: all)")
	level := fs.String("log-level", "info", "debug, info or error")
	format := fs.String("log-format", "json", "json or text")
	if err := fs.Parse(args); err != nil {
		return Options{}, err
	}
	if fs.NArg() > 0 {
		return Options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *mode != "provider" {
		return Options{}, fmt.Errorf("invalid --mode %q: this process only serves providers (--mode=provider)", *mode)
	}
	if *kinds != "" {
		opts.Kinds = strings.Split(*kinds, ",")
	}
	log, err := logging.Setup(*level, *format)
	if err != nil {
		return Options{}, err
	}
	opts.Log = log
	return opts, nil
}

// kubernetesClient reads objects straight from the API server: a provider
// process caches and watches nothing. The configuration is found as eso
// finds its own (server.RESTConfig).
func kubernetesClient(kubeconfig string) (client.Client, error) {
	rc, err := server.RESTConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("sdk: %w", err)
	}
	rc.UserAgent = "eso-sdk-provider"
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(rc, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("sdk: Kubernetes client: %w", err)
	}
	return c, nil
}
