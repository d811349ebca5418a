// Package config holds eso's command-line configuration and parses it.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/sdk/logging"
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

// Config is eso's configuration.
type Config struct {
	Mode Mode

	// Kubeconfig is a kubeconfig path; empty uses $KUBECONFIG, in-cluster config
	// or ~/.kube/config, in that order.
	Kubeconfig string
	// MetricsAddr serves Prometheus metrics; "0" turns them off.
	MetricsAddr string
	// MetricsSecure serves them over HTTPS to callers the API server
	// authenticates and authorizes (get on the /metrics non-resource URL).
	MetricsSecure bool
	// HealthAddr serves /healthz and /readyz; "0" turns them off.
	HealthAddr string
	// PprofAddr serves Go's /debug/pprof profiles in core mode; "0"
	// (the default) turns them off.
	PprofAddr string

	LeaderElect         bool
	LeaderElectionID    string
	LeaderElectionNS    string
	LeaderElectionLease time.Duration
	LeaderElectionRenew time.Duration
	LeaderElectionRetry time.Duration
	// Shards is how the controllers' work is split between replicas:
	// ShardsOff (one leader does it all) or ShardsAuto (every replica
	// works the namespaces a ring over the live replicas gives it).
	Shards          string
	ControllerClass string
	// Namespace limits the namespaced objects eso watches to these
	// namespaces (comma-separated; empty: all), for installs whose RBAC
	// grants only those. Cluster-scoped kinds are watched either way.
	Namespace            string
	ClientQPS            float64
	ClientBurst          int
	Concurrency          int
	StoreConcurrency     int
	StoreRequeueInterval time.Duration

	LogLevel  string
	LogFormat string

	// SystemNamespace is eso's own namespace: it keeps the key that signs
	// GeneratorStates there.
	SystemNamespace string

	// AllowAmbientCredentials lets provider configurations without auth use
	// eso's own cloud identity.
	AllowAmbientCredentials bool

	// RolloutRestarts restarts the workloads that ask for it when eso
	// changes a Secret's data (app/rollout).
	RolloutRestarts bool

	// RemoteProvidersInsecure lets core reach out-of-process providers
	// without TLS when a store gives no client certificate. Only for
	// development: anything on the network path can read the secrets.
	RemoteProvidersInsecure bool

	// ProviderCertsNamespace, when set, makes core keep a CA and the
	// certificates of a provider process (server, for ProviderCertsDNSNames)
	// and of core (client) in Secrets of that namespace.
	ProviderCertsNamespace string
	ProviderCertsDNSNames  []string

	// Provider mode: where the gRPC server listens and the TLS material it
	// serves with. Plaintext needs Insecure.
	GRPCAddr        string
	TLSCertFile     string
	TLSKeyFile      string
	TLSClientCAFile string
	Insecure        bool
	// ProviderKinds, if set, are the only provider and generator kinds served.
	ProviderKinds []string

	// SkipControllerNameValidation lets several eso instances run in one
	// process, as tests do. Not a flag.
	SkipControllerNameValidation bool
}

// The values of --shards.
const (
	ShardsOff  = "off"
	ShardsAuto = "auto"
)

// Sharded reports whether every replica works a share (--shards auto).
func (c Config) Sharded() bool { return c.Shards == ShardsAuto }

// Default returns the configuration used when no flag is given: sized for
// thousands of ExternalSecrets, not one at a time.
func Default() Config {
	return Config{
		Mode:                 ModeCore,
		SystemNamespace:      ownNamespace(),
		MetricsAddr:          ":8080",
		HealthAddr:           ":8081",
		PprofAddr:            "0",
		GRPCAddr:             ":8443",
		LeaderElectionID:     "eso-core.external-secrets.io",
		LeaderElectionLease:  15 * time.Second,
		LeaderElectionRenew:  10 * time.Second,
		LeaderElectionRetry:  2 * time.Second,
		Shards:               ShardsOff,
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
// errors are written to out. commands are eso's subcommands (main's
// table): --help lists them, and an argument that is none of them is
// reported with their names.
func Parse(args []string, out io.Writer, commands ...Command) (Config, error) {
	cfg := Default()
	fs := flag.NewFlagSet("eso", flag.ContinueOnError)
	fs.SetOutput(out)
	var mode string
	fs.StringVar(&mode, "mode", string(cfg.Mode), "what to run: "+modeList())
	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "path to a kubeconfig; empty uses $KUBECONFIG, in-cluster config, then ~/.kube/config")
	fs.StringVar(&cfg.MetricsAddr, "metrics-bind-address", cfg.MetricsAddr, `address of the metrics endpoint; "0" turns it off`)
	fs.BoolVar(&cfg.MetricsSecure, "metrics-secure", false,
		"core mode: serve metrics over HTTPS only to callers the API server authenticates and authorizes for get on /metrics (TokenReview and SubjectAccessReview)")
	fs.StringVar(&cfg.HealthAddr, "health-probe-bind-address", cfg.HealthAddr, `address of /healthz and /readyz; "0" turns them off`)
	fs.StringVar(&cfg.PprofAddr, "pprof-bind-address", cfg.PprofAddr,
		`core mode: address of Go's /debug/pprof profiles, for diagnosing CPU and memory use; "0" (the default) turns them off. Unauthenticated: bind it to localhost or port-forward`)
	fs.BoolVar(&cfg.LeaderElect, "leader-elect", cfg.LeaderElect, "elect a leader so only one replica reconciles")
	fs.StringVar(&cfg.LeaderElectionID, "leader-election-id", cfg.LeaderElectionID, "name of the leader election Lease")
	fs.StringVar(&cfg.LeaderElectionNS, "leader-election-namespace", "", "namespace of the leader election Lease (default: the pod's namespace)")
	fs.DurationVar(&cfg.LeaderElectionLease, "leader-election-lease-duration", cfg.LeaderElectionLease, "how long a leader's lease lasts")
	fs.DurationVar(&cfg.LeaderElectionRenew, "leader-election-renew-deadline", cfg.LeaderElectionRenew, "how long the leader retries renewing before giving up")
	fs.DurationVar(&cfg.LeaderElectionRetry, "leader-election-retry-period", cfg.LeaderElectionRetry, "how often candidates retry")
	fs.StringVar(&cfg.Shards, "shards", cfg.Shards, `split the controllers' work between replicas: "off" (the elected leader does it all) or "auto" (every replica works the namespaces a hash ring over the live replicas' Leases gives it; the leader election still picks one replica for singleton tasks)`)
	fs.StringVar(&cfg.ControllerClass, "controller-class", "", "act only on stores whose spec.controller equals this (empty: stores without a class)")
	fs.StringVar(&cfg.Namespace, "namespace", "", "watch only these namespaces, comma-separated (empty: all namespaces)")
	fs.StringVar(&cfg.SystemNamespace, "system-namespace", cfg.SystemNamespace,
		"eso's own namespace, where it keeps the key that signs GeneratorStates (default: $POD_NAMESPACE, else the pod's service account namespace, else default)")
	fs.Float64Var(&cfg.ClientQPS, "client-qps", cfg.ClientQPS, "client-side limit of queries per second to the API server, per resource type; 0 leaves limiting to the API server's priority and fairness")
	fs.IntVar(&cfg.ClientBurst, "client-burst", cfg.ClientBurst, "burst of queries to the API server when --client-qps is set")
	fs.IntVar(&cfg.Concurrency, "concurrent", cfg.Concurrency, "ExternalSecrets reconciled at once")
	fs.IntVar(&cfg.StoreConcurrency, "store-concurrent", cfg.StoreConcurrency, "stores reconciled at once")
	fs.BoolVar(&cfg.AllowAmbientCredentials, "allow-ambient-credentials", false,
		"let provider configurations without auth use eso's own cloud identity (IRSA, workload identity, instance role); any namespace able to create one could then use it")
	fs.BoolVar(&cfg.RolloutRestarts, "rollout-restarts", false,
		"core mode: restart the Deployments, StatefulSets and DaemonSets that ask for it (Reloader's annotations, or an ExternalSecret's rolloutRestartTargets) when eso changes a Secret's data; needs get, list, watch and patch on them")
	fs.StringVar(&cfg.GRPCAddr, "grpc-bind-address", cfg.GRPCAddr, "provider mode: address of the gRPC server")
	fs.StringVar(&cfg.TLSCertFile, "tls-cert-file", "", "provider mode: PEM file of the server certificate (reloaded when it changes)")
	fs.StringVar(&cfg.TLSKeyFile, "tls-key-file", "", "provider mode: PEM file of the server certificate's private key")
	fs.StringVar(&cfg.TLSClientCAFile, "tls-client-ca-file", "", "provider mode: PEM bundle of the CAs client certificates must chain to")
	fs.BoolVar(&cfg.Insecure, "insecure", false, "provider mode: serve plaintext gRPC without client certificates (development only)")
	fs.Func("provider-kinds", "provider mode: comma-separated provider and generator kinds to serve (default: every kind compiled in)", func(v string) error {
		cfg.ProviderKinds = splitList(v)
		return nil
	})
	fs.BoolVar(&cfg.RemoteProvidersInsecure, "remote-providers-insecure", false,
		"connect without TLS to out-of-process providers (providerConfig.address) of stores that set no auth.clientCertificate; for development only")
	fs.StringVar(&cfg.ProviderCertsNamespace, "provider-certificates-namespace", "",
		"keep a CA and the provider process's server and client certificates in Secrets of this namespace (eso-provider-ca, eso-provider-server-tls, eso-provider-client-tls); empty: off, e.g. when cert-manager issues them")
	fs.Func("provider-certificates-dns-names", "comma-separated DNS names of the provider process's Service, for its server certificate", func(v string) error {
		cfg.ProviderCertsDNSNames = splitList(v)
		return nil
	})
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "debug, info or error")
	fs.StringVar(&cfg.LogFormat, "log-format", cfg.LogFormat, "json, or text (also: console)")
	// Errors are reported in one line below, not with the whole usage;
	// --help prints it.
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(out, fs, commands)
			return cfg, err
		}
		return cfg, flagError(err, fs)
	}
	if fs.NArg() > 0 {
		names := commandNames(commands)
		msg := fmt.Sprintf("unexpected argument %q (commands: %s)", fs.Arg(0), strings.Join(names, ", "))
		if c := plugin.Closest(fs.Arg(0), names); c != "" {
			msg = fmt.Sprintf("unknown command %q: did you mean %q? (commands: %s)", fs.Arg(0), c, strings.Join(names, ", "))
		}
		return cfg, errors.New(msg)
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
	if c.RemoteProvidersInsecure && c.Mode != ModeCore {
		errs = append(errs, errors.New("--remote-providers-insecure applies to --mode=core only: it is how core connects to providers"))
	}
	if (c.ProviderCertsNamespace == "") != (len(c.ProviderCertsDNSNames) == 0) {
		errs = append(errs, errors.New("--provider-certificates-namespace and --provider-certificates-dns-names go together"))
	}
	if c.ProviderCertsNamespace != "" && c.Mode != ModeCore {
		errs = append(errs, errors.New("--provider-certificates-* apply to --mode=core only: core issues, the provider process mounts"))
	}
	errs = append(errs, c.validateShards()...)
	for _, ns := range c.Namespaces() {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("invalid --namespace %q: %s", ns, strings.Join(msgs, "; ")))
		}
	}
	errs = append(errs, logging.CheckLevel(c.LogLevel), logging.CheckFormat(c.LogFormat))
	if c.Mode == ModeProvider {
		errs = append(errs, c.validateProviderMode()...)
	} else if c.usesProviderModeFlags() {
		errs = append(errs, fmt.Errorf("--tls-*, --insecure and --provider-kinds apply only to --mode=%s", ModeProvider))
	}
	return errors.Join(errs...)
}

// validateShards checks --shards and the durations a ring's Leases use:
// a replica must stop working before the others may judge it gone.
func (c Config) validateShards() []error {
	switch c.Shards {
	case ShardsOff:
		return nil
	case ShardsAuto:
	default:
		return []error{fmt.Errorf("invalid --shards %q: %q or %q", c.Shards, ShardsOff, ShardsAuto)}
	}
	var errs []error
	if c.Mode != ModeCore {
		errs = append(errs, errors.New("--shards applies to --mode=core only"))
	}
	if !(c.LeaderElectionRetry > 0 && c.LeaderElectionRetry < c.LeaderElectionRenew && c.LeaderElectionRenew < c.LeaderElectionLease) {
		errs = append(errs, errors.New("--shards auto needs --leader-election-retry-period < --leader-election-renew-deadline < --leader-election-lease-duration"))
	}
	return errs
}

// validateProviderMode checks the gRPC server's flags: TLS material is
// required unless plaintext was asked for explicitly.
func (c Config) validateProviderMode() []error {
	var errs []error
	if c.GRPCAddr == "" {
		errs = append(errs, errors.New("--grpc-bind-address may not be empty in provider mode"))
	}
	tlsFlags := map[string]string{"--tls-cert-file": c.TLSCertFile, "--tls-key-file": c.TLSKeyFile, "--tls-client-ca-file": c.TLSClientCAFile}
	var missing, given []string
	for _, name := range []string{"--tls-cert-file", "--tls-key-file", "--tls-client-ca-file"} {
		if tlsFlags[name] == "" {
			missing = append(missing, name)
		} else {
			given = append(given, name)
		}
	}
	switch {
	case c.Insecure && len(given) > 0:
		errs = append(errs, fmt.Errorf("--insecure serves plaintext and cannot be combined with %s", strings.Join(given, ", ")))
	case !c.Insecure && len(missing) > 0:
		errs = append(errs, fmt.Errorf("provider mode serves mTLS only and needs %s; "+
			"pass --insecure to serve plaintext without client certificates (development only)", strings.Join(missing, ", ")))
	}
	seen := map[string]bool{}
	for _, k := range c.ProviderKinds {
		if seen[k] {
			errs = append(errs, fmt.Errorf("--provider-kinds lists %s twice", k))
		}
		seen[k] = true
	}
	if c.ProviderKinds != nil && len(c.ProviderKinds) == 0 {
		errs = append(errs, errors.New("--provider-kinds is empty: leave it out to serve every kind compiled in"))
	}
	return errs
}

func (c Config) usesProviderModeFlags() bool {
	return c.TLSCertFile != "" || c.TLSKeyFile != "" || c.TLSClientCAFile != "" || c.Insecure || c.ProviderKinds != nil
}

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(v string) []string {
	out := []string{}
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func modeList() string {
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

// serviceAccountNamespace is where Kubernetes tells a pod its namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ownNamespace is the namespace eso runs in: $POD_NAMESPACE (the downward
// API), else the pod's service account namespace, else "default" (eso run
// from a shell).
func ownNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile(serviceAccountNamespace); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b))
	}
	return "default"
}

// Namespaces are the namespaces --namespace names, or none for all.
func (c Config) Namespaces() []string { return splitList(c.Namespace) }
