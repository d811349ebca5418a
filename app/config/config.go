// Package config holds eso's command-line configuration and parses it.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Mode is what the binary runs as.
type Mode string

const (
	// ModeCore runs the controllers with the compiled-in providers in process.
	ModeCore Mode = "core"
	// ModeProvider serves the compiled-in providers over gRPC with mTLS.
	ModeProvider Mode = "provider"
)

// Modes lists the valid modes.
var Modes = []Mode{ModeCore, ModeProvider}

// ErrProviderModeNotBuilt is returned for --mode=provider until provider mode lands.
var ErrProviderModeNotBuilt = errors.New("--mode=provider is not built yet: this eso runs providers in process only (--mode=core)")

// Config is eso's configuration.
type Config struct {
	Mode Mode

	// Kubeconfig is a kubeconfig path; empty uses $KUBECONFIG, in-cluster config
	// or ~/.kube/config, in that order.
	Kubeconfig string
	// MetricsAddr serves Prometheus metrics; "0" turns them off.
	MetricsAddr string
	// HealthAddr serves /healthz and /readyz; "0" turns them off.
	HealthAddr string

	LeaderElect          bool
	LeaderElectionID     string
	LeaderElectionNS     string
	LeaderElectionLease  time.Duration
	LeaderElectionRenew  time.Duration
	LeaderElectionRetry  time.Duration
	ControllerClass      string
	Namespace            string
	ClientQPS            float64
	ClientBurst          int
	Concurrency          int
	StoreConcurrency     int
	StoreRequeueInterval time.Duration

	LogLevel  string
	LogFormat string

	// AllowAmbientCredentials lets provider configurations without auth use
	// eso's own cloud identity.
	AllowAmbientCredentials bool

	// SkipControllerNameValidation lets several eso instances run in one
	// process, as tests do. Not a flag.
	SkipControllerNameValidation bool
}

// Default returns the configuration used when no flag is given: sized for
// thousands of ExternalSecrets, not one at a time.
func Default() Config {
	return Config{
		Mode:                 ModeCore,
		MetricsAddr:          ":8080",
		HealthAddr:           ":8081",
		LeaderElectionID:     "eso-core.external-secrets.io",
		LeaderElectionLease:  15 * time.Second,
		LeaderElectionRenew:  10 * time.Second,
		LeaderElectionRetry:  2 * time.Second,
		ClientQPS:            0,
		ClientBurst:          100,
		Concurrency:          10,
		StoreConcurrency:     2,
		StoreRequeueInterval: 5 * time.Minute,
		LogLevel:             "info",
		LogFormat:            "json",
	}
}

// Parse parses command-line flags (without the program name). Usage and
// errors are written to out.
func Parse(args []string, out io.Writer) (Config, error) {
	cfg := Default()
	fs := flag.NewFlagSet("eso", flag.ContinueOnError)
	fs.SetOutput(out)
	var mode string
	fs.StringVar(&mode, "mode", string(cfg.Mode), "what to run: "+modeList())
	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "path to a kubeconfig; empty uses $KUBECONFIG, in-cluster config, then ~/.kube/config")
	fs.StringVar(&cfg.MetricsAddr, "metrics-bind-address", cfg.MetricsAddr, `address of the metrics endpoint; "0" turns it off`)
	fs.StringVar(&cfg.HealthAddr, "health-probe-bind-address", cfg.HealthAddr, `address of /healthz and /readyz; "0" turns them off`)
	fs.BoolVar(&cfg.LeaderElect, "leader-elect", cfg.LeaderElect, "elect a leader so only one replica reconciles")
	fs.StringVar(&cfg.LeaderElectionID, "leader-election-id", cfg.LeaderElectionID, "name of the leader election Lease")
	fs.StringVar(&cfg.LeaderElectionNS, "leader-election-namespace", "", "namespace of the leader election Lease (default: the pod's namespace)")
	fs.DurationVar(&cfg.LeaderElectionLease, "leader-election-lease-duration", cfg.LeaderElectionLease, "how long a leader's lease lasts")
	fs.DurationVar(&cfg.LeaderElectionRenew, "leader-election-renew-deadline", cfg.LeaderElectionRenew, "how long the leader retries renewing before giving up")
	fs.DurationVar(&cfg.LeaderElectionRetry, "leader-election-retry-period", cfg.LeaderElectionRetry, "how often candidates retry")
	fs.StringVar(&cfg.ControllerClass, "controller-class", "", "act only on stores whose spec.controller equals this (empty: stores without a class)")
	fs.StringVar(&cfg.Namespace, "namespace", "", "watch only this namespace (empty: all namespaces)")
	fs.Float64Var(&cfg.ClientQPS, "client-qps", cfg.ClientQPS, "client-side limit of queries per second to the API server, per resource type; 0 leaves limiting to the API server's priority and fairness")
	fs.IntVar(&cfg.ClientBurst, "client-burst", cfg.ClientBurst, "burst of queries to the API server when --client-qps is set")
	fs.IntVar(&cfg.Concurrency, "concurrent", cfg.Concurrency, "ExternalSecrets reconciled at once")
	fs.IntVar(&cfg.StoreConcurrency, "store-concurrent", cfg.StoreConcurrency, "stores reconciled at once")
	fs.BoolVar(&cfg.AllowAmbientCredentials, "allow-ambient-credentials", false,
		"let provider configurations without auth use eso's own cloud identity (IRSA, workload identity, instance role); any namespace able to create one could then use it")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "debug, info or error")
	fs.StringVar(&cfg.LogFormat, "log-format", cfg.LogFormat, "json or console")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q (commands: providers, version)", fs.Arg(0))
	}
	cfg.Mode = Mode(mode)
	return cfg, cfg.Validate()
}

// Validate checks values that flags cannot.
func (c Config) Validate() error {
	var errs []error
	if !slices.Contains(Modes, c.Mode) {
		errs = append(errs, fmt.Errorf("invalid --mode %q: valid modes are %s", c.Mode, modeList()))
	}
	if c.Concurrency < 1 || c.StoreConcurrency < 1 {
		errs = append(errs, errors.New("--concurrent and --store-concurrent must be at least 1"))
	}
	if c.ClientQPS < 0 || c.ClientBurst < 1 {
		errs = append(errs, errors.New("--client-qps may not be negative and --client-burst must be at least 1"))
	}
	if !slices.Contains([]string{"debug", "info", "error"}, c.LogLevel) {
		errs = append(errs, fmt.Errorf("invalid --log-level %q: debug, info or error", c.LogLevel))
	}
	if !slices.Contains([]string{"json", "console"}, c.LogFormat) {
		errs = append(errs, fmt.Errorf("invalid --log-format %q: json or console", c.LogFormat))
	}
	return errors.Join(errs...)
}

func modeList() string {
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}
