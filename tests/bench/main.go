// Command bench measures eso as it runs in production: bin/eso in core mode
// as a process of its own, against a real kube-apiserver + etcd (build/controlplane).
// It reports the time until N ExternalSecrets are Ready, against the time a
// plain client-go program takes for the same writes (raw.go), eso's memory
// (RSS idle, peak, after sync, per ExternalSecret) and CPU, the writes of a steady-state window in
// which every ExternalSecret refreshes without anything changing, how long a
// new ExternalSecret waits while those refreshes run, the same for as many
// PushSecrets (and how soon a changed source reaches the provider), and
// what 10,000 unrelated Secrets cost eso's memory.
//
// Run it with make bench (which builds bin/eso and the envtest binaries);
// make bench BENCH_FLAGS="-namespaces 10" passes flags, -h lists them. It
// prints a table and writes the results as JSON (-out).
//
// It is a program, not a go test benchmark, so make test never runs it.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/eso-dev/eso/app/config"
)

type options struct {
	ESOBin        string        `json:"-"`
	Namespaces    int           `json:"namespaces"`
	PerNamespace  int           `json:"externalsecrets_per_namespace"`
	Refresh       time.Duration `json:"-"`
	WindowRefresh time.Duration `json:"-"`
	Window        time.Duration `json:"-"`
	Concurrent    int           `json:"concurrent"`
	ClientQPS     float64       `json:"client_qps"`
	ClientBurst   int           `json:"client_burst"`
	LogLevel      string        `json:"log_level"`
	Unrelated     int           `json:"unrelated_secrets"`
	UnrelatedKiB  int           `json:"unrelated_secret_kib"`
	UnrelatedNS   int           `json:"unrelated_namespaces"`
	Labelled      int           `json:"labelled_secrets"`
	LabelledKiB   int           `json:"labelled_secret_kib"`
	LabelledBound float64       `json:"labelled_peak_growth_bound_mib"`
	Settle        time.Duration `json:"-"`
	Remote        bool          `json:"remote"`
	Push          bool          `json:"pushsecrets"`
	Raw           bool          `json:"raw_client"`
	Precreate     bool          `json:"precreated"`
	ScaleOut      bool          `json:"scale_out"`
	Replicas      int           `json:"replicas"`
	Lease         time.Duration `json:"-"`
	Handovers     bool          `json:"handovers"`
	ChangeAll     bool          `json:"change_all"`
	Out           string        `json:"-"`
	ProfileDir    string        `json:"-"`
	SyncProfile   time.Duration `json:"-"`
	ESOArgs       []string      `json:"eso_args,omitempty"`
	ESOEnv        []string      `json:"eso_env,omitempty"`
	Timeout       time.Duration `json:"-"`
}

func parseFlags() options {
	def := config.Default() // eso's own defaults, so the benchmark measures what users run
	var o options
	flag.StringVar(&o.ESOBin, "eso", "bin/eso", "eso binary to run (make build)")
	flag.IntVar(&o.Namespaces, "namespaces", 50, "namespaces, each with a Fake provider and a SecretStore")
	flag.IntVar(&o.PerNamespace, "es-per-namespace", 20, "ExternalSecrets per namespace")
	flag.DurationVar(&o.Refresh, "refresh", time.Minute, "refreshInterval of the ExternalSecrets while they first sync")
	flag.DurationVar(&o.WindowRefresh, "window-refresh", 2*time.Second, "refreshInterval set before the steady-state window, short enough that every ExternalSecret refreshes in it")
	flag.DurationVar(&o.Window, "window", 10*time.Second, "length of the steady-state window")
	flag.IntVar(&o.Concurrent, "concurrent", def.Concurrency, "eso --concurrent")
	flag.Float64Var(&o.ClientQPS, "client-qps", def.ClientQPS, "eso --client-qps (0: no client-side limit)")
	flag.IntVar(&o.ClientBurst, "client-burst", def.ClientBurst, "eso --client-burst")
	flag.StringVar(&o.LogLevel, "log-level", def.LogLevel, "eso --log-level")
	flag.IntVar(&o.Unrelated, "unrelated", 10000, "unrelated Secrets (no eso label) added in the second phase; 0 skips it")
	flag.IntVar(&o.UnrelatedKiB, "unrelated-kib", 32, "size of each unrelated Secret in KiB")
	flag.IntVar(&o.UnrelatedNS, "unrelated-namespaces", 10, "namespaces the unrelated Secrets are spread over")
	flag.IntVar(&o.Labelled, "labelled", 100, "Secrets labelled as eso's (as any tenant may label them) added in the last phase, with a restart before and after; 0 skips it")
	flag.IntVar(&o.LabelledKiB, "labelled-kib", 900, "size of each labelled Secret in KiB")
	flag.Float64Var(&o.LabelledBound, "labelled-bound", 64, "fail if eso's peak RSS through a restart grows by more than this many MiB with the labelled Secrets")
	flag.DurationVar(&o.Settle, "settle", 5*time.Second, "pause before each RSS reading, so it is not taken mid-burst")
	flag.BoolVar(&o.Remote, "remote", true, "also run the first-sync workload through a provider process (eso --mode=provider over mTLS) and compare")
	flag.BoolVar(&o.Raw, "raw", true, "before eso starts, time a plain client-go program making the writes of a first sync (each target Secret, each status) with eso's -concurrent and client limits, on a fresh control plane of its own like eso's, and compare")
	flag.BoolVar(&o.Precreate, "precreate", true, "create the first sync's ExternalSecrets while eso is stopped (-scale-out: before the replicas start) and time eso from its start, as the raw client is timed from its first write; false times eso from the first ExternalSecret created, creation included")
	flag.BoolVar(&o.Push, "push", true, "also run as many PushSecrets (two keys each, to the Fake stores)")
	flag.DurationVar(&o.SyncProfile, "sync-profile", 30*time.Second, "with -profile-dir, how long eso's CPU profile of the first sync runs, from eso's start (0: none)")
	flag.StringVar(&o.ProfileDir, "profile-dir", "", "if set, run eso with --pprof-bind-address and write its heap profiles (after the first sync, after the steady-state window; with -scale-out each replica's heap and goroutines after the first sync) into this directory, for go tool pprof")
	flag.Func("eso-args", "extra arguments for eso in core mode, space-separated (e.g. \"--concurrent 20\")", func(v string) error {
		o.ESOArgs = append(o.ESOArgs, strings.Fields(v)...)
		return nil
	})
	flag.Func("eso-env", "environment for eso in core mode only, space-separated NAME=value (e.g. \"GOGC=50\"); the control plane and the raw client keep the benchmark's", func(v string) error {
		for _, kv := range strings.Fields(v) {
			if !strings.Contains(kv, "=") {
				return fmt.Errorf("%q is not NAME=value", kv)
			}
			o.ESOEnv = append(o.ESOEnv, kv)
		}
		return nil
	})
	flag.BoolVar(&o.ScaleOut, "scale-out", false, "run the scale-out figures instead: -replicas eso processes with --shards auto sync -namespaces x -es-per-namespace ExternalSecrets (against a raw client with their combined -concurrent), then, while those refresh, one is killed (kill -9), a replacement and one more join, and two stop")
	flag.BoolVar(&o.Handovers, "handovers", true, "-scale-out: after the first sync, run the kill, joins and scale-down (a change reaches its Secret at the ExternalSecret's next refresh, so keep -refresh short for them)")
	flag.BoolVar(&o.ChangeAll, "change-all", false, "-scale-out: at each handover, change the remote secret every ExternalSecret of a moved namespace reads, so all its Secrets change at once, instead of the one its first ExternalSecret alone reads (one Secret per moved namespace)")
	flag.IntVar(&o.Replicas, "replicas", 3, "-scale-out: replicas at the start")
	flag.DurationVar(&o.Lease, "lease", def.LeaderElectionLease, "-scale-out: the replicas' --leader-election-lease-duration (renew deadline and retry period in eso's default proportions)")
	flag.StringVar(&o.Out, "out", filepath.Join(os.TempDir(), "eso-bench-results.json"), "where to write the JSON results")
	flag.DurationVar(&o.Timeout, "timeout", 9*time.Minute, "give up after this long")
	flag.Parse()
	if flag.NArg() > 0 {
		fail(fmt.Errorf("unexpected argument %q", flag.Arg(0)))
	}
	if o.Replicas < 1 || o.Handovers && o.Replicas < 3 || o.Lease < 3*time.Second {
		fail(errors.New("-replicas must be at least 1, and 3 with -handovers (the run stops two after a kill); -lease at least 3s"))
	}
	if o.Namespaces < 1 || o.PerNamespace < 1 || o.Window <= 0 || o.WindowRefresh <= 0 || o.Refresh <= 0 ||
		o.Unrelated < 0 || o.UnrelatedKiB < 1 || o.UnrelatedNS < 1 || o.Labelled < 0 || o.LabelledKiB < 1 || o.LabelledKiB > 1000 {
		fail(errors.New("-namespaces, -es-per-namespace, -unrelated-kib, -unrelated-namespaces, -labelled-kib (≤ 1000) and the durations must be positive"))
	}
	return o
}

func main() {
	o := parseFlags()
	// The benchmark's own watch logs nothing worth reading; without a logger
	// controller-runtime complains on stderr.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	res, err := run(ctx, o)
	if err != nil {
		fail(err)
	}
	printTable(os.Stdout, res)
	if err := writeJSON(o.Out, res); err != nil {
		fail(err)
	}
	fmt.Printf("\nJSON results: %s\n", o.Out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// run starts the control plane and eso, runs both phases and stops
// everything it started, whatever happens.
func run(sigCtx context.Context, o options) (res *results, err error) {
	ctx, cancel := context.WithTimeoutCause(sigCtx, o.Timeout, fmt.Errorf("-timeout %v reached", o.Timeout))
	defer cancel()
	if _, err := os.Stat("apis/crds"); err != nil {
		return nil, errors.New("run from the repository root (make bench)")
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS is not set (make bench sets it)")
	}
	esoBin, err := filepath.Abs(o.ESOBin)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(esoBin); err != nil {
		return nil, fmt.Errorf("%w (make build builds it)", err)
	}
	if others := competitors(); len(others) > 0 {
		// Their CPU and memory would skew every figure.
		progress("warning: already running on this machine: %s", strings.Join(others, ", "))
	}
	started := time.Now().UTC()
	work, err := os.MkdirTemp("", "eso-bench-")
	if err != nil {
		return nil, err
	}
	// Logs are kept when something fails, for the post-mortem, but not when
	// the user interrupted the run.
	defer func() {
		switch {
		case err != nil && sigCtx.Err() != nil:
			err = fmt.Errorf("interrupted: %w", err)
		case err != nil:
			err = fmt.Errorf("%w\n(logs kept in %s)", err, work)
			return
		}
		_ = os.RemoveAll(work)
	}()

	progress("building the control plane runner")
	cpBin := filepath.Join(work, "controlplane")
	goTool := cmp.Or(os.Getenv("GO"), "go") // make passes its $(GO)
	if out, err := exec.CommandContext(ctx, goTool, "build", "-o", cpBin, "./build/controlplane").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building build/controlplane: %v\n%s", err, out)
	}

	if o.ScaleOut {
		res = &results{Params: o, ExternalSecrets: o.Namespaces * o.PerNamespace, ESOVersion: esoVersion(esoBin), StartedAt: started}
		res.Scale, err = runScaleOut(ctx, o, work, cpBin, esoBin)
		if err != nil && sigCtx.Err() == nil && ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", err, context.Cause(ctx))
		}
		return res, err
	}
	var raw *rawResult
	if o.Raw {
		if raw, err = rawOnFreshControlPlane(ctx, o, work, cpBin); err != nil {
			return nil, err
		}
	}
	b, stop, err := startEnvironment(ctx, o, work, cpBin, esoBin, "in-process", false)
	if err != nil {
		return nil, err
	}
	b.raw = raw
	res, err = b.run(ctx)
	if err == nil {
		err = b.eso.exited() // eso must have survived all of it
	}
	stop()
	if err == nil && o.Remote {
		// A fresh control plane and eso, so the provider process's run
		// starts from the same empty cluster the in-process one did.
		var rb *bench
		if rb, stop, err = startEnvironment(ctx, o, work, cpBin, esoBin, "provider", true); err == nil {
			err = rb.remote(ctx, res)
			if err == nil {
				err = rb.eso.exited()
			}
			stop()
		}
	}
	if res != nil {
		res.ESOVersion, res.StartedAt = esoVersion(esoBin), started
	}
	if err != nil && sigCtx.Err() == nil && ctx.Err() != nil {
		err = fmt.Errorf("%w (%w)", err, context.Cause(ctx))
	}
	return res, err
}

// startEnvironment starts a control plane and eso in core mode (issuing a
// provider process's certificates when remote), named tag in the logs, and
// returns the bench driving them and the function that stops both.
func startEnvironment(ctx context.Context, o options, work, cpBin, esoBin, tag string, remote bool) (b *bench, stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]() // eso before the control plane, so it logs no errors about a vanished API server
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	cp, kubeconfig, err := startControlPlane(ctx, work, cpBin, tag, "the "+tag+" run")
	if err != nil {
		return nil, nil, err
	}
	stops = append(stops, func() { cp.stop(30 * time.Second) })
	metricsPort, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	healthPort, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	args := []string{esoBin, "--mode=core",
		"--kubeconfig", kubeconfig,
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metricsPort),
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", healthPort),
		"--concurrent", fmt.Sprint(o.Concurrent),
		"--client-qps", fmt.Sprint(o.ClientQPS),
		"--client-burst", fmt.Sprint(o.ClientBurst),
		"--log-level", o.LogLevel}
	args, pprofURL, err := withPprof(o, args)
	if err != nil {
		return nil, nil, err
	}
	args = append(args, o.ESOArgs...)
	if remote {
		// Core issues the provider process's certificates, as it would in a
		// cluster without cert-manager; their namespace exists first, so
		// they are issued at once.
		args = append(args, "--provider-certificates-namespace", certsNamespace, "--provider-certificates-dns-names", "localhost")
		if err := createCertsNamespace(ctx, kubeconfig); err != nil {
			return nil, nil, err
		}
	}
	progress("starting %s in core mode", o.ESOBin)
	eso, err := startProcEnv("eso", filepath.Join(work, tag+"-eso.log"), o.ESOEnv, args...)
	if err != nil {
		return nil, nil, err
	}
	stops = append(stops, func() {
		if b != nil {
			eso = b.eso // restarted since
		}
		eso.stop(15 * time.Second)
	})
	if err := waitHealthy(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort), eso, time.Minute); err != nil {
		return nil, nil, err
	}
	b, err = newBench(ctx, o, work, esoBin, kubeconfig, eso, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	if err != nil {
		return nil, nil, err
	}
	b.pprofURL, b.profilePrefix = pprofURL, tag
	b.esoArgs, b.esoLog, b.healthURL = args, filepath.Join(work, tag+"-eso"), fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort)
	return b, stop, nil
}

// esoVersion is the first line of `eso version`, so results of different
// builds can be told apart.
func esoVersion(bin string) string {
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return line
}
