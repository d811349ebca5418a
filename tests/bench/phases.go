package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// createWorkers is how many objects the benchmark creates at once: enough to
// keep the API server busy without the benchmark's own client being the limit.
const createWorkers = 16

type bench struct {
	o          options
	work       string // directory of the run's files and logs
	esoBin     string
	kubeconfig string
	c          client.Client
	cs         kubernetes.Interface
	eso        *proc
	metricsURL string
	track      *tracker
	nss        []string
	// esoArgs, esoLog and healthURL restart eso (labelled).
	esoArgs   []string
	esoLog    string
	healthURL string
	restarts  int
	// pprofURL is eso's /debug/pprof when -profile-dir is set; profiles
	// are written there named profilePrefix-<point>-heap.pb.gz.
	pprofURL      string
	profilePrefix string
	// raw is the raw client's first sync, run before eso started (-raw).
	raw *rawResult
}

func newBench(ctx context.Context, o options, work, esoBin, kubeconfig string, eso *proc, metricsURL string) (*bench, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	rc.QPS, rc.Burst = 5000, 10000 // the benchmark's client must not be the bottleneck
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(rc, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	track, err := startTracker(ctx, rc, scheme)
	if err != nil {
		return nil, err
	}
	return &bench{o: o, work: work, esoBin: esoBin, kubeconfig: kubeconfig, c: c, cs: cs, eso: eso, metricsURL: metricsURL, track: track}, nil
}

// mem reads eso's memory; with settle it first waits, then takes the median
// of five readings a second apart, so one GC cycle does not decide the result.
func (b *bench) mem(ctx context.Context, settle bool) (memory, error) {
	if !settle {
		return readMemory(b.eso.pid())
	}
	if err := sleep(ctx, b.o.Settle); err != nil {
		return memory{}, err
	}
	var rss []uint64
	var m memory
	for i := range 5 {
		if i > 0 {
			if err := sleep(ctx, time.Second); err != nil {
				return memory{}, err
			}
		}
		var err error
		if m, err = readMemory(b.eso.pid()); err != nil {
			return memory{}, err
		}
		rss = append(rss, m.RSS)
	}
	slices.Sort(rss)
	m.RSS = rss[len(rss)/2]
	return m, nil
}

func (b *bench) cpu() (float64, error) { return cpuSeconds(b.eso.pid()) }

func (b *bench) run(ctx context.Context) (*results, error) {
	o := b.o
	n := o.Namespaces * o.PerNamespace
	res := &results{Params: o, ExternalSecrets: n, RefreshSeconds: o.Refresh.Seconds(), WindowRefreshSeconds: o.WindowRefresh.Seconds(), WindowSeconds: o.Window.Seconds()}

	idle, err := b.mem(ctx, true)
	if err != nil {
		return nil, err
	}
	res.Sync.RSSIdleMiB = mib(idle.RSS)

	if b.nss, err = createStoreNamespaces(ctx, b.c, o.Namespaces); err != nil {
		return nil, err
	}
	// Stores first: the timed part is the ExternalSecrets' sync, not store
	// validation (ExternalSecrets wait for an unready store).
	if err := withTimeout(ctx, time.Minute, func(ctx context.Context) error { return waitStoresReady(ctx, b.c, o.Namespaces) }); err != nil {
		return nil, err
	}

	if err := b.firstSync(ctx, res, n); err != nil {
		return nil, err
	}
	if err := b.steadyState(ctx, res, n); err != nil {
		return nil, err
	}
	if err := b.newUnderRefresh(ctx, res); err != nil {
		return nil, err
	}

	if o.Push {
		if err := b.pushSecrets(ctx, res); err != nil {
			return nil, err
		}
	}
	if o.Unrelated > 0 {
		if err := b.unrelated(ctx, res); err != nil {
			return nil, err
		}
	}
	if o.Labelled > 0 {
		if err := b.labelled(ctx, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// firstSync creates n ExternalSecrets and times them until all are Ready.
func (b *bench) firstSync(ctx context.Context, res *results, n int) error {
	o := b.o
	progress("creating %d ExternalSecrets (refreshInterval %v) and waiting for all to be Ready", n, o.Refresh)
	esoBefore, err := readESO(ctx, b.metricsURL)
	if err != nil {
		return err
	}
	apiBefore, err := readAPIWrites(ctx, b.cs)
	if err != nil {
		return err
	}
	cpuBefore, err := b.cpu()
	if err != nil {
		return err
	}
	if o.Precreate {
		b.eso.stop(15 * time.Second)
	}
	cpBefore, err := controlPlaneCPU()
	if err != nil {
		return err
	}
	benchBefore, err := cpuSeconds(os.Getpid())
	if err != nil {
		return err
	}
	start := time.Now()
	err = parallel(ctx, n, createWorkers, func(i int) error {
		return b.c.Create(ctx, externalSecret(b.nss[i%o.Namespaces], fmt.Sprintf("es-%d", i/o.Namespaces), o.Refresh))
	})
	if err != nil {
		return fmt.Errorf("creating ExternalSecrets: %w", err)
	}
	res.Sync.CreateSeconds = time.Since(start).Seconds()
	if o.Precreate {
		// eso is timed from its start, the ExternalSecrets all there; a
		// new process counts its CPU and metrics from zero.
		progress("starting eso with the %d ExternalSecrets in place", n)
		// The API server's counts from here: not the creates above.
		if apiBefore, err = readAPIWrites(ctx, b.cs); err != nil {
			return err
		}
		if cpBefore, err = controlPlaneCPU(); err != nil {
			return err
		}
		if benchBefore, err = cpuSeconds(os.Getpid()); err != nil {
			return err
		}
		start = time.Now()
		if err := b.startESO(); err != nil {
			return err
		}
		esoBefore, cpuBefore = esoCounters{}, 0
	}
	profiled := b.cpuProfile(ctx, "sync", o.SyncProfile)
	apiProfiled := apiServerProfile(ctx, o, b.cs, b.profilePrefix+"-sync-apiserver-cpu.pb.gz", o.SyncProfile)
	if err := withTimeout(ctx, 5*time.Minute, func(ctx context.Context) error { return b.track.waitAllReady(ctx, n, 0) }); err != nil {
		return b.withESO(err)
	}
	res.Sync.AllReadySeconds = time.Since(start).Seconds()
	res.Sync.Progress = b.track.quarters(start, n)
	cpuAfter, err := b.cpu()
	if err != nil {
		return err
	}
	res.Sync.ESOCPUSeconds = round2(cpuAfter - cpuBefore)
	cpAfter, err := controlPlaneCPU()
	if err != nil {
		return err
	}
	res.Sync.ControlPlaneCPUSeconds = round2(cpAfter - cpBefore)
	benchAfter, err := cpuSeconds(os.Getpid())
	if err != nil {
		return err
	}
	res.Sync.BenchCPUSeconds = round2(benchAfter - benchBefore)
	res.Sync.PerSecond = float64(n) / res.Sync.AllReadySeconds
	m, err := b.mem(ctx, false) // right away: the sync's working set, before GC returns it
	if err != nil {
		return err
	}
	res.Sync.RSSAfterSyncMiB, res.Sync.RSSPeakMiB = mib(m.RSS), mib(m.Peak)
	res.Sync.RSSPerESKiB = (res.Sync.RSSAfterSyncMiB - res.Sync.RSSIdleMiB) * 1024 / float64(n)
	// After the figures above, as on the raw client's side: the profiles
	// may outlast the sync.
	if err := errors.Join(profiled(), apiProfiled()); err != nil {
		return err
	}
	if b.raw != nil {
		b.raw.Ratio = res.Sync.AllReadySeconds / b.raw.Seconds
		res.Raw = b.raw
	}
	if err := b.heapProfile(ctx, "after-sync"); err != nil {
		return err
	}

	// Events are sent asynchronously; give them a moment before counting.
	if err := sleep(ctx, 2*time.Second); err != nil {
		return err
	}
	esoAfter, err := readESO(ctx, b.metricsURL)
	if err != nil {
		return err
	}
	apiAfter, err := readAPIWrites(ctx, b.cs)
	if err != nil {
		return err
	}
	res.Sync.ESO = esoAfter.minus(esoBefore)
	res.Sync.API = apiAfter.minus(apiBefore)
	return nil
}

// steadyState shortens every refreshInterval so refreshes fall into the
// window, waits for the change itself to be synced, then counts what a window
// of refreshes with nothing changed costs. The ideal is no write at all.
func (b *bench) steadyState(ctx context.Context, res *results, n int) error {
	o := b.o
	if o.WindowRefresh != o.Refresh {
		progress("setting refreshInterval %v on every ExternalSecret", o.WindowRefresh)
		err := parallel(ctx, n, createWorkers, func(i int) error {
			return setRefresh(ctx, b.c, b.nss[i%o.Namespaces], fmt.Sprintf("es-%d", i/o.Namespaces), o.WindowRefresh)
		})
		if err != nil {
			return fmt.Errorf("setting refreshInterval: %w", err)
		}
		if err := withTimeout(ctx, 3*time.Minute, func(ctx context.Context) error { return b.track.waitAllReady(ctx, n, o.WindowRefresh) }); err != nil {
			return b.withESO(err)
		}
	}
	// The edit made eso write every status once; wait until those writes
	// have stopped so that they do not count in the window.
	if err := b.waitQuiet(ctx, 30*time.Second); err != nil {
		return err
	}

	progress("steady-state window of %v (refreshInterval %v)", o.Window, o.WindowRefresh)
	esoBefore, err := readESO(ctx, b.metricsURL)
	if err != nil {
		return err
	}
	apiBefore, err := readAPIWrites(ctx, b.cs)
	if err != nil {
		return err
	}
	cpuBefore, err := b.cpu()
	if err != nil {
		return err
	}
	if err := sleep(ctx, o.Window); err != nil {
		return err
	}
	cpuAfter, err := b.cpu()
	if err != nil {
		return err
	}
	esoAfter, err := readESO(ctx, b.metricsURL)
	if err != nil {
		return err
	}
	apiAfter, err := readAPIWrites(ctx, b.cs)
	if err != nil {
		return err
	}
	res.Steady.ESO = esoAfter.minus(esoBefore)
	res.Steady.API = apiAfter.minus(apiBefore)
	res.Steady.ESOCPUSeconds = round2(cpuAfter - cpuBefore)
	res.Steady.ExpectedRefreshes = float64(n) * o.Window.Seconds() / o.WindowRefresh.Seconds()
	return b.heapProfile(ctx, "steady")
}

// waitQuiet waits until eso has written nothing for two seconds, or gives up
// after limit (the window then shows the writes that did not stop).
func (b *bench) waitQuiet(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	prev, err := readESO(ctx, b.metricsURL)
	if err != nil {
		return err
	}
	quietSince := time.Now()
	for time.Since(quietSince) < 2*time.Second && time.Now().Before(deadline) {
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
		cur, err := readESO(ctx, b.metricsURL)
		if err != nil {
			return err
		}
		if cur.SecretWrites != prev.SecretWrites || cur.AnyStatusWrites != prev.AnyStatusWrites {
			quietSince = time.Now()
		}
		prev = cur
	}
	return nil
}

// newUnderRefresh times one new ExternalSecret while all the others keep
// refreshing at the window's interval.
func (b *bench) newUnderRefresh(ctx context.Context, res *results) error {
	progress("creating %d more ExternalSecrets, one after another, while the others refresh", newSamples)
	var ms []float64
	for i := range newSamples {
		es := externalSecret(b.nss[i%len(b.nss)], fmt.Sprintf("fresh-%d", i), b.o.Refresh)
		start := time.Now()
		if err := b.c.Create(ctx, es); err != nil {
			return err
		}
		if err := withTimeout(ctx, time.Minute, func(ctx context.Context) error { return b.track.waitReady(ctx, es.Namespace+"/"+es.Name) }); err != nil {
			return b.withESO(err)
		}
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
	}
	slices.Sort(ms)
	res.NewReadyMillis = quantile(ms, 0.5)
	res.NewReadyP99Millis = quantile(ms, 0.99)
	res.NewReadyMaxMillis = ms[len(ms)-1]
	return nil
}

// newSamples is how many new ExternalSecrets the benchmark times under
// refresh, enough for a p99.
const newSamples = 100

// unrelated adds Secrets eso must ignore and compares eso's memory before and
// after: its cache selects Secrets by label on the API server, so it should
// never receive them.
func (b *bench) unrelated(ctx context.Context, res *results) error {
	o := b.o
	u := &res.Unrelated
	before, err := b.mem(ctx, true)
	if err != nil {
		return err
	}
	esoBefore, err := readESO(ctx, b.metricsURL)
	if err != nil {
		return err
	}
	u.RSSBeforeMiB, u.HeapBeforeMiB = mib(before.RSS), esoBefore.HeapInUse/(1<<20)

	progress("creating %d unrelated %d KiB Secrets in %d namespaces", o.Unrelated, o.UnrelatedKiB, o.UnrelatedNS)
	var nss []string
	for i := range o.UnrelatedNS {
		ns := fmt.Sprintf("unrelated-%d", i)
		if err := createNamespace(ctx, b.c, ns); err != nil {
			return err
		}
		nss = append(nss, ns)
	}
	payload := randomBytes(o.UnrelatedKiB << 10) // random, so nothing on the way can compress it away
	start := time.Now()
	err = parallel(ctx, o.Unrelated, createWorkers, func(i int) error {
		return b.c.Create(ctx, unrelatedSecret(nss[i%len(nss)], fmt.Sprintf("blob-%d", i), payload))
	})
	if err != nil {
		return fmt.Errorf("creating unrelated Secrets: %w", err)
	}
	u.CreateSeconds = time.Since(start).Seconds()

	after, err := b.mem(ctx, true)
	if err != nil {
		return err
	}
	esoAfter, err := readESO(ctx, b.metricsURL)
	if err != nil {
		return err
	}
	u.RSSAfterMiB, u.HeapAfterMiB, u.RSSPeakMiB = mib(after.RSS), esoAfter.HeapInUse/(1<<20), mib(after.Peak)
	u.RSSDiffMiB = u.RSSAfterMiB - u.RSSBeforeMiB
	u.ESOSecretWrites = esoAfter.SecretWrites - esoBefore.SecretWrites
	return nil
}

// labelled adds Secrets labelled as eso's, as any tenant who may create a
// Secret may label them, and compares eso's memory: running, and through a
// restart (whose initial list is where a cache of their data peaks)
// against a restart without them. eso caches such Secrets as metadata
// only, so its peak must not grow by more than -labelled-bound.
func (b *bench) labelled(ctx context.Context, res *results) error {
	o, l := b.o, &res.Labelled
	progress("restarting eso without labelled Secrets")
	without, err := b.restart(ctx)
	if err != nil {
		return err
	}
	l.RestartRSSWithoutMiB, l.RestartPeakWithoutMiB = mib(without.RSS), mib(without.Peak)

	progress("creating %d %d KiB Secrets labelled as eso's", o.Labelled, o.LabelledKiB)
	if err := createNamespace(ctx, b.c, "labelled"); err != nil {
		return err
	}
	payload := randomBytes(o.LabelledKiB << 10)
	start := time.Now()
	err = parallel(ctx, o.Labelled, createWorkers, func(i int) error {
		s := unrelatedSecret("labelled", fmt.Sprintf("blob-%d", i), payload)
		s.Labels = map[string]string{"reconcile.external-secrets.io/managed": "true"}
		return b.c.Create(ctx, s)
	})
	if err != nil {
		return fmt.Errorf("creating labelled Secrets: %w", err)
	}
	l.CreateSeconds = time.Since(start).Seconds()
	running, err := b.mem(ctx, true)
	if err != nil {
		return err
	}
	l.RSSRunningMiB, l.PeakRunningMiB = mib(running.RSS), mib(running.Peak)

	progress("restarting eso with them")
	with, err := b.restart(ctx)
	if err != nil {
		return err
	}
	l.RestartRSSWithMiB, l.RestartPeakWithMiB = mib(with.RSS), mib(with.Peak)
	l.PeakGrowthMiB = l.RestartPeakWithMiB - l.RestartPeakWithoutMiB
	if l.PeakGrowthMiB > o.LabelledBound {
		return fmt.Errorf("eso's peak RSS through a restart grew by %.1f MiB (%.1f -> %.1f) with %d labelled %d KiB Secrets, over the bound of %.0f MiB",
			l.PeakGrowthMiB, l.RestartPeakWithoutMiB, l.RestartPeakWithMiB, o.Labelled, o.LabelledKiB, o.LabelledBound)
	}
	return nil
}

// restart stops eso and starts it again, waits until it is ready and has
// synced everything again, and returns its memory (Peak: VmHWM of the new
// process, its start included).
func (b *bench) restart(ctx context.Context) (memory, error) {
	b.eso.stop(15 * time.Second)
	if err := b.startESO(); err != nil {
		return memory{}, err
	}
	if err := waitHealthy(ctx, b.healthURL, b.eso, time.Minute); err != nil {
		return memory{}, err
	}
	if err := b.waitQuiet(ctx, time.Minute); err != nil {
		return memory{}, err
	}
	return b.mem(ctx, true)
}

// startESO starts eso again, as it was started first, after b.eso stopped.
func (b *bench) startESO() error {
	b.restarts++
	eso, err := startProcEnv("eso", fmt.Sprintf("%s-restart-%d.log", b.esoLog, b.restarts), b.o.ESOEnv, b.esoArgs...)
	if err != nil {
		return err
	}
	b.eso = eso
	return nil
}

// heapProfile writes eso's heap profile, taken after a garbage collection
// so it shows what is live, into -profile-dir; without it it does nothing.
func (b *bench) heapProfile(ctx context.Context, point string) error {
	if b.pprofURL == "" {
		return nil
	}
	return saveProfile(ctx, b.o.ProfileDir, b.pprofURL+"/heap?gc=1", fmt.Sprintf("%s-%s-heap.pb.gz", b.profilePrefix, point), "-top -sample_index=inuse_space")
}

// cpuProfile starts taking eso's CPU profile for d, from as soon as eso
// answers, into -profile-dir; the returned function waits for it. Without
// -profile-dir it does nothing.
func (b *bench) cpuProfile(ctx context.Context, point string, d time.Duration) (wait func() error) {
	return esoCPUProfile(ctx, b.o, b.pprofURL, fmt.Sprintf("%s-%s-cpu.pb.gz", b.profilePrefix, point), d)
}

// esoCPUProfile starts taking the CPU profile of the eso serving pprofURL
// for d, from as soon as it answers, into -profile-dir as name; the
// returned function waits for it. Without a pprofURL or a d it does
// nothing.
func esoCPUProfile(ctx context.Context, o options, pprofURL, name string, d time.Duration) (wait func() error) {
	if pprofURL == "" || d <= 0 {
		return func() error { return nil }
	}
	done := make(chan error, 1)
	go func() {
		url := fmt.Sprintf("%s/profile?seconds=%d", pprofURL, int(d.Seconds()))
		for {
			raw, err := get(ctx, url)
			if err == nil {
				done <- writeProfile(o.ProfileDir, name, raw, "-top")
				return
			}
			if sleep(ctx, 100*time.Millisecond) != nil { // eso is not listening yet
				done <- fmt.Errorf("reading eso's CPU profile: %w", err)
				return
			}
		}
	}()
	return func() error { return <-done }
}

// apiServerProfile starts taking the API server's CPU profile for d into
// -profile-dir as name; the returned function waits for it. Taken on both
// first syncs, eso's and the raw client's, it shows where the control
// plane's CPU goes for each (go tool pprof -diff_base). Without
// -profile-dir it does nothing.
func apiServerProfile(ctx context.Context, o options, cs kubernetes.Interface, name string, d time.Duration) (wait func() error) {
	if o.ProfileDir == "" || d <= 0 {
		return func() error { return nil }
	}
	done := make(chan error, 1)
	go func() {
		raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", fmt.Sprint(int(d.Seconds()))).Timeout(d + time.Minute).DoRaw(ctx)
		if err != nil {
			done <- fmt.Errorf("reading the API server's CPU profile: %w", err)
			return
		}
		done <- writeProfile(o.ProfileDir, name, raw, "-top")
	}()
	return func() error { return <-done }
}

// get reads url whole; any status but 200 is an error.
func get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return raw, nil
}

// saveProfile reads a profile from a pprof URL and writes it into dir.
func saveProfile(ctx context.Context, dir, url, name, how string) error {
	raw, err := get(ctx, url)
	if err != nil {
		return fmt.Errorf("reading profile %s: %w", url, err)
	}
	return writeProfile(dir, name, raw, how)
}

// withPprof adds eso's --pprof-bind-address to args when -profile-dir is
// set, and returns the /debug/pprof URL it serves ("" otherwise).
func withPprof(o options, args []string) ([]string, string, error) {
	if o.ProfileDir == "" {
		return args, "", nil
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	args = append(args, "--pprof-bind-address", fmt.Sprintf("127.0.0.1:%d", port))
	return args, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof", port), nil
}

// writeProfile writes a pprof profile into dir and says how to read it.
func writeProfile(dir, name string, raw []byte, how string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, name)
	progress("profile: %s (go tool pprof %s %s)", path, how, path)
	return os.WriteFile(path, raw, 0o644)
}

// withESO adds eso's last log lines to an error about eso not doing its job.
func (b *bench) withESO(err error) error {
	if e := b.eso.exited(); e != nil {
		return fmt.Errorf("%w: %w", err, e)
	}
	return fmt.Errorf("%w; last eso log lines:\n%s", err, tail(b.eso.log, 20))
}

func withTimeout(ctx context.Context, d time.Duration, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return fn(ctx)
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// round2 drops the float noise of subtracting clock-tick counts.
func round2(x float64) float64 { return math.Round(x*100) / 100 }

// startControlPlane starts a control plane (kube-apiserver + etcd with
// eso's CRDs) named tag in work and waits until it serves; the caller
// stops it.
func startControlPlane(ctx context.Context, work, cpBin, tag, purpose string) (cp *proc, kubeconfig string, err error) {
	progress("starting a control plane (kube-apiserver + etcd) for %s", purpose)
	kubeconfig = filepath.Join(work, tag+"-kubeconfig")
	cp, err = startProc("control plane", filepath.Join(work, tag+"-controlplane.log"), cpBin, "--write-kubeconfig", kubeconfig, "--crds", "apis/crds")
	if err != nil {
		return nil, "", err
	}
	if err := waitFile(ctx, kubeconfig, cp, 2*time.Minute); err != nil {
		cp.stop(30 * time.Second)
		return nil, "", err
	}
	return cp, kubeconfig, nil
}

// waitFile waits for the control plane to write its kubeconfig, which it
// does once the API server serves and the CRDs are established.
func waitFile(ctx context.Context, path string, p *proc, limit time.Duration) error {
	return withTimeout(ctx, limit, func(ctx context.Context) error {
		for {
			if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
				return nil
			}
			if err := p.exited(); err != nil {
				return err
			}
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return fmt.Errorf("waiting for the control plane: %w; last log lines:\n%s", err, tail(p.log, 20))
			}
		}
	})
}

// waitHealthy waits until url answers 200, i.e. eso's caches have synced.
func waitHealthy(ctx context.Context, url string, p *proc, limit time.Duration) error {
	return withTimeout(ctx, limit, func(ctx context.Context) error {
		for {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return err
			}
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return nil
				}
			}
			if err := p.exited(); err != nil {
				return err
			}
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return fmt.Errorf("waiting for eso to be ready: %w; last log lines:\n%s", err, tail(p.log, 20))
			}
		}
	})
}
