package main

// The scale-out run (-scale-out): -replicas eso processes with --shards auto
// on a fresh control plane. It measures the first sync of every
// ExternalSecret against a raw client making the same writes with the
// replicas' combined concurrency, each replica's RSS and share of the
// namespaces; then, with the ExternalSecrets refreshing, a kill -9 of one
// replica and a scale to one more and then to two fewer: how long the
// moved namespaces went unworked, how soon a remote change made during the
// handover reached its Secrets, and how many times each of those Secrets
// was written for that one change.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/sharding"
)

const shardNamespace = "eso-system"

type scaleResults struct {
	Replicas        int     `json:"replicas"`
	ExternalSecrets int     `json:"externalsecrets"`
	Namespaces      int     `json:"namespaces"`
	LeaseSeconds    float64 `json:"lease_duration_seconds"`

	Sync struct {
		CreateSeconds   float64    `json:"create_seconds"`
		AllReadySeconds float64    `json:"all_ready_seconds"`
		PerSecond       float64    `json:"ready_per_second"`
		Raw             *rawResult `json:"raw_client"`
		// ESOCPUSeconds is the replicas' CPU together, ControlPlaneCPUSeconds
		// the API server's and etcd's, while they synced.
		ESOCPUSeconds          float64 `json:"eso_cpu_seconds"`
		ControlPlaneCPUSeconds float64 `json:"control_plane_cpu_seconds"`
		// Progress is when each of quarterPoints were Ready.
		Progress []float64 `json:"ready_progress_seconds"`
		// BenchCPUSeconds is the benchmark process's meanwhile: the watch
		// that times the replicas (with -precreate).
		BenchCPUSeconds float64            `json:"bench_cpu_seconds,omitempty"`
		RSSMiB          map[string]float64 `json:"rss_after_sync_mib"`
		// Heap and Goroutines: each replica's heap in use and goroutines
		// after the sync, to tell what its RSS is made of.
		HeapMiB    map[string]float64 `json:"heap_inuse_after_sync_mib"`
		Goroutines map[string]float64 `json:"goroutines_after_sync"`
		Share      map[string]float64 `json:"namespace_share"`
		// Syncs and Reconciles: the replicas' ExternalSecret reconciles
		// that read the provider, and all of them, since they started
		// (more than one per ExternalSecret is work done twice).
		Syncs      float64 `json:"syncs"`
		Reconciles float64 `json:"reconciles"`
		// PeakConnections: the most TCP connections to the API server
		// open or dialling at once on this machine, from after the raw
		// client's run until all were Ready (the bench's own few
		// included); PeakAfterSeconds: when, from the first replica's start.
		PeakConnections  int     `json:"peak_apiserver_connections"`
		PeakAfterSeconds float64 `json:"peak_after_first_start_seconds"`
		// API is what the API server was asked from the first replica's
		// start until all were Ready (with -precreate).
		API apiWrites `json:"api"`
	} `json:"first_sync"`

	Handovers []handover `json:"handovers"`
}

// handover is one membership change under refresh.
type handover struct {
	What string `json:"what"`
	// Moved is how many namespaces changed replica.
	Moved int `json:"moved_namespaces"`
	// WorkedAgainSeconds: from the change until the live replicas, each
	// counting the new membership, together work every namespace.
	WorkedAgainSeconds float64 `json:"worked_again_seconds"`
	// ChangedSecrets are the targets of the moved namespaces, whose remote
	// value changed ChangeAfter into the handover.
	ChangedSecrets int     `json:"changed_secrets"`
	ChangeAfter    float64 `json:"change_after_seconds"`
	// ReachP50/Max: from that change until each Secret held it.
	ReachP50Seconds float64 `json:"reach_p50_seconds"`
	ReachMaxSeconds float64 `json:"reach_max_seconds"`
	Unreached       int     `json:"unreached"`
	// FloorP50/Max: the earliest the change could reach the median and
	// the last of its Secrets had the replicas worked every moved namespace
	// from the moment all were worked again, writing at the raw client's
	// rate of the first sync (a Secret and a status each): a change of
	// thousands of Secrets at once is bounded by the writes it makes, not
	// only by the handover.
	FloorP50Seconds float64 `json:"reach_floor_p50_seconds,omitempty"`
	FloorMaxSeconds float64 `json:"reach_floor_max_seconds,omitempty"`
	// WrittenTwice: changed Secrets written more than once for the change;
	// OtherWrites: writes to any other target meanwhile.
	WrittenTwice int `json:"written_twice"`
	OtherWrites  int `json:"other_writes"`
	// UnworkedMaxSeconds: the top bucket bound of eso's own
	// eso_shard_handover_unworked_seconds observed so far.
	UnworkedMaxSeconds float64 `json:"unworked_max_seconds_from_metrics"`
}

type replica struct {
	name    string
	p       *proc
	metrics string
	ready   string // its /readyz
	pprof   string // its /debug/pprof, with -profile-dir
}

type scaleBench struct {
	o          options
	work       string
	esoBin     string
	kubeconfig string
	rc         *rest.Config
	c          client.Client
	track      *tracker
	writes     *writeLog
	nss        []string
	replicas   []*replica
	started    int
	conns      *connSampler
	firstStart time.Time // of the first replica
}

func runScaleOut(ctx context.Context, o options, work, cpBin, esoBin string) (*scaleResults, error) {
	raw := o
	raw.Concurrent = o.Replicas * o.Concurrent // the replicas' workers together
	rawRes, err := rawOnFreshControlPlane(ctx, raw, work, cpBin)
	if err != nil {
		return nil, err
	}
	cp, kubeconfig, err := startControlPlane(ctx, work, cpBin, "scale", "the scale-out run")
	if err != nil {
		return nil, err
	}
	s := &scaleBench{o: o, work: work, esoBin: esoBin, kubeconfig: kubeconfig}
	defer func() {
		for _, r := range s.replicas {
			r.p.stop(15 * time.Second)
		}
		cp.stop(30 * time.Second)
	}()
	res := &scaleResults{Replicas: o.Replicas, ExternalSecrets: o.Namespaces * o.PerNamespace, Namespaces: o.Namespaces,
		LeaseSeconds: o.Lease.Seconds()}
	res.Sync.Raw = rawRes

	if s.rc, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		return nil, err
	}
	s.rc.QPS, s.rc.Burst = 5000, 10000
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	if s.c, err = client.New(s.rc, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	if err := createNamespace(ctx, s.c, shardNamespace); err != nil {
		return nil, err
	}
	port, err := portOf(s.rc.Host)
	if err != nil {
		return nil, err
	}
	sampleCtx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	s.conns = sampleConnections(sampleCtx, port)
	if !o.Precreate { // else firstSync starts them
		if err := s.startAll(ctx); err != nil {
			return nil, err
		}
	}
	if s.track, err = startTracker(ctx, s.rc, scheme); err != nil {
		return nil, err
	}
	if err := s.firstSync(ctx, res); err != nil {
		return nil, err
	}
	steps := []struct {
		what string
		do   func(ctx context.Context) error
	}{
		{"kill -9 of one replica", func(context.Context) error { return s.kill(0) }},
		{"a replacement joins", s.start},
		{"one more joins", s.start},
		{"two stop (SIGTERM)", func(context.Context) error { return s.stopTwo() }},
	}
	if !o.Handovers {
		steps = nil
	}
	if len(steps) > 0 {
		// Only the handovers need the write log; during the first sync its
		// watch would load eso's control plane with a Secret watch the raw
		// client's has not.
		if s.writes, err = startWriteLog(ctx, s.rc, scheme); err != nil {
			return nil, err
		}
	}
	for _, st := range steps {
		h, err := s.handover(ctx, st.what, st.do)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.what, err)
		}
		if raw := res.Sync.Raw; raw != nil && raw.PerSecond > 0 {
			h.setReachFloor(raw.PerSecond)
		}
		res.Handovers = append(res.Handovers, *h)
	}
	for _, r := range s.replicas {
		if err := r.p.exited(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// start runs one more replica and waits until it serves.
func (s *scaleBench) start(ctx context.Context) error { return s.launch(ctx, true) }

// launch runs one more replica, and with wait waits until it serves.
func (s *scaleBench) launch(ctx context.Context, wait bool) error {
	s.started++
	if s.started == 1 {
		s.firstStart = time.Now()
	}
	name := fmt.Sprintf("replica-%d", s.started)
	metricsPort, err := freePort()
	if err != nil {
		return err
	}
	healthPort, err := freePort()
	if err != nil {
		return err
	}
	lease := s.o.Lease
	args := []string{s.esoBin, "--mode=core", "--kubeconfig", s.kubeconfig, "--shards=auto",
		"--leader-election-namespace", shardNamespace, "--system-namespace", shardNamespace,
		"--leader-election-lease-duration", lease.String(),
		"--leader-election-renew-deadline", (lease * 2 / 3).String(),
		"--leader-election-retry-period", (lease * 2 / 15).String(),
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metricsPort),
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", healthPort),
		"--concurrent", fmt.Sprint(s.o.Concurrent),
		"--client-qps", fmt.Sprint(s.o.ClientQPS), "--client-burst", fmt.Sprint(s.o.ClientBurst),
		"--log-level", s.o.LogLevel}
	args, pprofURL, err := withPprof(s.o, args)
	if err != nil {
		return err
	}
	args = append(args, s.o.ESOArgs...)
	progress("starting %s (--shards auto)", name)
	p, err := startProcEnv(name, filepath.Join(s.work, name+".log"), append([]string{"POD_NAME=" + name}, s.o.ESOEnv...), args...)
	if err != nil {
		return err
	}
	r := &replica{name: name, p: p, metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
		ready: fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort), pprof: pprofURL}
	s.replicas = append(s.replicas, r)
	if !wait {
		return nil
	}
	return waitHealthy(ctx, r.ready, p, 2*time.Minute)
}

// startAll starts -replicas replicas and waits until they share the
// namespaces.
func (s *scaleBench) startAll(ctx context.Context) error {
	for range s.o.Replicas {
		if err := s.start(ctx); err != nil {
			return err
		}
	}
	_, err := s.balanced(ctx, 2*time.Minute)
	return err
}

// launchAll starts -replicas replicas at once, waiting for none: they come
// up and sync side by side, as a Deployment's Pods do.
func (s *scaleBench) launchAll(ctx context.Context) error {
	for range s.o.Replicas {
		if err := s.launch(ctx, false); err != nil {
			return err
		}
	}
	return nil
}

// kill ends replica i at once, as a node failure would.
func (s *scaleBench) kill(i int) error {
	r := s.replicas[i]
	s.replicas = slices.Delete(s.replicas, i, i+1)
	progress("kill -9 %s", r.name)
	_ = r.p.cmd.Process.Signal(syscall.SIGKILL)
	<-r.p.done
	return nil
}

// stopTwo stops the two oldest replicas at once, as a scale-down does.
func (s *scaleBench) stopTwo() error {
	gone := s.replicas[:2]
	s.replicas = slices.Clone(s.replicas[2:])
	var wg sync.WaitGroup
	for _, r := range gone {
		progress("stopping %s", r.name)
		wg.Add(1)
		go func() { defer wg.Done(); r.p.stop(90 * time.Second) }()
	}
	wg.Wait()
	return nil
}

// cpu is the CPU time the running replicas have used together, and the
// control plane's (controlPlaneCPU).
func (s *scaleBench) cpu() (replicas, controlPlane float64, err error) {
	for _, r := range s.replicas {
		c, err := cpuSeconds(r.p.pid())
		if err != nil {
			return 0, 0, err
		}
		replicas += c
	}
	controlPlane, err = controlPlaneCPU()
	return replicas, controlPlane, err
}

// firstSync creates the namespaces, stores and ExternalSecrets and times
// them until all are Ready (with -precreate, from the replicas' start after
// all is created); then reads each replica's RSS and share.
func (s *scaleBench) firstSync(ctx context.Context, res *scaleResults) error {
	o := s.o
	nss, err := createStoreNamespaces(ctx, s.c, o.Namespaces)
	if err != nil {
		return err
	}
	s.nss = nss
	if !o.Precreate {
		if err := withTimeout(ctx, 5*time.Minute, func(ctx context.Context) error { return waitStoresReady(ctx, s.c, o.Namespaces) }); err != nil {
			return err
		}
	}
	n := o.Namespaces * o.PerNamespace
	progress("creating %d ExternalSecrets (refreshInterval %v) and waiting for all to be Ready", n, o.Refresh)
	esoBefore, cpBefore, err := s.cpu()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(s.rc)
	if err != nil {
		return err
	}
	var apiBefore apiWrites
	var benchBefore float64
	profiled, apiProfiled := func() error { return nil }, func() error { return nil }
	start := time.Now()
	err = parallel(ctx, n, createWorkers, func(i int) error {
		return s.c.Create(ctx, externalSecret(s.nss[i%o.Namespaces], fmt.Sprintf("es-%d", i/o.Namespaces), o.Refresh))
	})
	if err != nil {
		return err
	}
	res.Sync.CreateSeconds = time.Since(start).Seconds()
	if o.Precreate {
		// The replicas are timed from the first one's start, everything in
		// place: they validate the stores and sync.
		if _, cpBefore, err = s.cpu(); err != nil {
			return err
		}
		if apiBefore, err = readAPIWrites(ctx, cs); err != nil {
			return err
		}
		if benchBefore, err = cpuSeconds(os.Getpid()); err != nil {
			return err
		}
		start = time.Now()
		if err := s.launchAll(ctx); err != nil {
			return err
		}
		// The first replica's and the API server's, for the raw client's
		// beside it (go tool pprof -diff_base).
		profiled = esoCPUProfile(ctx, o, s.replicas[0].pprof, "scale-out-"+s.replicas[0].name+"-sync-cpu.pb.gz", o.SyncProfile)
		apiProfiled = apiServerProfile(ctx, o, cs, "scale-out-sync-apiserver-cpu.pb.gz", o.SyncProfile)
	}
	if err := withTimeout(ctx, 30*time.Minute, func(ctx context.Context) error { return s.track.waitAllReady(ctx, n, 0) }); err != nil {
		return err
	}
	res.Sync.AllReadySeconds = time.Since(start).Seconds()
	res.Sync.Progress = s.track.quarters(start, n)
	esoAfter, cpAfter, err := s.cpu()
	if err != nil {
		return err
	}
	if o.Precreate {
		apiAfter, err := readAPIWrites(ctx, cs)
		if err != nil {
			return err
		}
		res.Sync.API = apiAfter.minus(apiBefore)
		benchAfter, err := cpuSeconds(os.Getpid())
		if err != nil {
			return err
		}
		res.Sync.BenchCPUSeconds = round2(benchAfter - benchBefore)
	}
	res.Sync.ESOCPUSeconds, res.Sync.ControlPlaneCPUSeconds = round2(esoAfter-esoBefore), round2(cpAfter-cpBefore)
	res.Sync.PerSecond = float64(n) / res.Sync.AllReadySeconds
	res.Sync.Raw.Ratio = res.Sync.AllReadySeconds / res.Sync.Raw.Seconds
	if o.Precreate {
		for _, r := range s.replicas {
			if err := waitHealthy(ctx, r.ready, r.p, 2*time.Minute); err != nil {
				return err
			}
		}
		if _, err := s.balanced(ctx, 2*time.Minute); err != nil {
			return err
		}
	}
	if err := errors.Join(profiled(), apiProfiled()); err != nil { // after the figures: they may outlast the sync
		return err
	}
	if err := sleep(ctx, o.Settle); err != nil {
		return err
	}
	peak, at, err := s.conns.result()
	if err != nil {
		return fmt.Errorf("counting connections to the API server: %w", err)
	}
	res.Sync.PeakConnections, res.Sync.PeakAfterSeconds = peak, at.Sub(s.firstStart).Seconds()
	res.Sync.RSSMiB, res.Sync.Share = map[string]float64{}, map[string]float64{}
	res.Sync.HeapMiB, res.Sync.Goroutines = map[string]float64{}, map[string]float64{}
	owned, err := s.owned(ctx)
	if err != nil {
		return err
	}
	total := 0
	for _, n := range owned {
		total += n
	}
	for _, r := range s.replicas {
		m, err := readMemory(r.p.pid())
		if err != nil {
			return err
		}
		res.Sync.RSSMiB[r.name] = mib(m.RSS)
		res.Sync.Share[r.name] = float64(owned[r.name]) / float64(total)
		fams, err := scrape(ctx, r.metrics)
		if err != nil {
			return err
		}
		res.Sync.HeapMiB[r.name] = sum(fams, "go_memstats_heap_inuse_bytes", nil) / (1 << 20)
		res.Sync.Goroutines[r.name] = sum(fams, "go_goroutines", nil)
		counters := countersOf(fams)
		res.Sync.Syncs += counters.Syncs
		res.Sync.Reconciles += counters.Reconciles
	}
	// After every RSS is read: a profile collects garbage first.
	for _, r := range s.replicas {
		if r.pprof == "" {
			continue
		}
		prefix := "scale-out-" + r.name + "-after-sync"
		if err := saveProfile(ctx, s.o.ProfileDir, r.pprof+"/heap?gc=1", prefix+"-heap.pb.gz", "-top -sample_index=inuse_space"); err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		if err := saveProfile(ctx, s.o.ProfileDir, r.pprof+"/goroutine", prefix+"-goroutines.pb.gz", "-top"); err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
	}
	return nil
}

// setReachFloor sets the reach floor for writes at perSecond (see
// handover.FloorP50Seconds).
func (h *handover) setReachFloor(perSecond float64) {
	unworked := max(h.WorkedAgainSeconds-h.ChangeAfter, 0)
	writes := float64(h.ChangedSecrets) / perSecond
	h.FloorP50Seconds, h.FloorMaxSeconds = unworked+writes/2, unworked+writes
}

// handover makes one membership change (do) while the ExternalSecrets
// refresh, changes a remote secret in every namespace that moves a third
// of a lease duration into it (the one its first ExternalSecret reads, or
// with -change-all the one all the others read too), and measures what the
// change cost.
func (s *scaleBench) handover(ctx context.Context, what string, do func(context.Context) error) (*handover, error) {
	progress("handover: %s", what)
	h := &handover{What: what}
	before, err := s.ring(ctx)
	if err != nil {
		return nil, err
	}
	unworkedBefore := s.unworkedMax(ctx)
	start := time.Now()
	if err := do(ctx); err != nil {
		return nil, err
	}
	after, err := s.ring(ctx)
	if err != nil {
		return nil, err
	}
	var moved []string
	for _, ns := range s.nss {
		if sharding.Owner(before, ns) != sharding.Owner(after, ns) {
			moved = append(moved, ns)
		}
	}
	h.Moved = len(moved)
	changeAt := s.o.Lease / 3
	if err := sleep(ctx, time.Until(start.Add(changeAt))); err != nil {
		return nil, err
	}
	h.ChangeAfter = time.Since(start).Seconds()
	value := fmt.Sprintf(`{"user":"app","password":"changed-%d"}`, time.Now().UnixNano())
	s.writes.reset()
	changed := time.Now()
	err = parallel(ctx, len(moved), createWorkers, func(i int) error {
		f := &provv1.Fake{}
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: moved[i], Name: "fake"}, f); err != nil {
			return err
		}
		setFakeValue(f, soloKey, value)
		if s.o.ChangeAll {
			setFakeValue(f, sharedKey, value)
		}
		return s.c.Update(ctx, f)
	})
	if err != nil {
		return nil, err
	}
	if _, err := s.balanced(ctx, 3*s.o.Lease); err != nil {
		return nil, err
	}
	h.WorkedAgainSeconds = time.Since(start).Seconds()
	// The changed targets of each moved namespace must take the new
	// value once.
	want := map[string]bool{}
	for _, ns := range moved {
		want[ns+"/"+soloES] = true
		if s.o.ChangeAll {
			for j := range s.o.PerNamespace {
				want[fmt.Sprintf("%s/es-%d", ns, j)] = true
			}
		}
	}
	h.ChangedSecrets = len(want)
	_ = withTimeout(ctx, 2*time.Minute, func(ctx context.Context) error { return s.writes.waitWritten(ctx, want) })
	if err := sleep(ctx, 5*time.Second); err != nil { // late second writes show up too
		return nil, err
	}
	reach, twice, others := s.writes.summary(want, changed)
	h.Unreached = len(want) - len(reach)
	if len(reach) > 0 {
		slices.Sort(reach)
		h.ReachP50Seconds, h.ReachMaxSeconds = quantile(reach, 0.5), reach[len(reach)-1]
	}
	h.WrittenTwice, h.OtherWrites = twice, others
	h.UnworkedMaxSeconds = max(s.unworkedMax(ctx), unworkedBefore)
	return h, nil
}

// ring is the member IDs of the running replicas, read from their Leases
// (eso-shard-<replica>-<random>); it waits for a replica just started to
// have written its own. Leases of stopped replicas are left out.
func (s *scaleBench) ring(ctx context.Context) ([]string, error) {
	var ids []string
	err := withTimeout(ctx, time.Minute, func(ctx context.Context) error {
		for {
			var leases coordinationv1.LeaseList
			if err := s.c.List(ctx, &leases, client.InNamespace(shardNamespace), client.HasLabels{sharding.LabelRing}); err != nil {
				return err
			}
			ids = ids[:0]
			for _, r := range s.replicas {
				for _, l := range leases.Items {
					if strings.HasPrefix(l.Name, "eso-shard-"+r.name+"-") {
						ids = append(ids, l.Name)
					}
				}
			}
			if len(ids) == len(s.replicas) {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%d of %d replicas have a Lease: %w", len(ids), len(s.replicas), ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	return sharding.Members(ids), err
}

// owned reads eso_shard_namespaces_owned of every replica, failing unless
// each counts all of them as members.
func (s *scaleBench) owned(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	for _, r := range s.replicas {
		fams, err := scrape(ctx, r.metrics)
		if err != nil {
			return nil, err
		}
		if m := int(sum(fams, "eso_shard_members", nil)); m != len(s.replicas) {
			return nil, fmt.Errorf("%s counts %d members of %d", r.name, m, len(s.replicas))
		}
		out[r.name] = int(sum(fams, "eso_shard_namespaces_owned", nil))
	}
	return out, nil
}

// balanced waits until the replicas together work every namespace.
func (s *scaleBench) balanced(ctx context.Context, limit time.Duration) (map[string]int, error) {
	var owned map[string]int
	err := withTimeout(ctx, limit, func(ctx context.Context) error {
		for {
			var namespaces corev1.NamespaceList
			err := s.c.List(ctx, &namespaces)
			if err == nil {
				if owned, err = s.owned(ctx); err == nil {
					total := 0
					for _, n := range owned {
						total += n
					}
					if total == len(namespaces.Items) {
						return nil
					}
					err = fmt.Errorf("replicas work %v of %d namespaces", owned, len(namespaces.Items))
				}
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w (%v)", ctx.Err(), err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	return owned, err
}

// unworkedMax is the largest bucket bound any replica's
// eso_shard_handover_unworked_seconds has an observation under.
func (s *scaleBench) unworkedMax(ctx context.Context) float64 {
	worst := 0.0
	for _, r := range s.replicas {
		fams, err := scrape(ctx, r.metrics)
		if err != nil {
			continue
		}
		f := fams["eso_shard_handover_unworked_seconds"]
		if f == nil {
			continue
		}
		for _, m := range f.Metric {
			h := m.GetHistogram()
			prev := uint64(0)
			for _, b := range h.GetBucket() {
				if b.GetCumulativeCount() > prev {
					worst = max(worst, b.GetUpperBound())
				}
				prev = b.GetCumulativeCount()
			}
		}
	}
	return worst
}

// writeLog records every write to eso's target Secrets (a watch of their
// metadata): when each last changed its data hash, and how many times each
// was written, since reset.
type writeLog struct {
	changes
	since   time.Time
	hashes  map[string]string    // Secret → data hash at reset
	current map[string]string    // Secret → data hash last seen
	written map[string]int       // Secret → writes since reset
	reached map[string]time.Time // Secret → first write with a new hash
}

func startWriteLog(ctx context.Context, rc *rest.Config, scheme *runtime.Scheme) (*writeLog, error) {
	w := &writeLog{changes: changes{changed: make(chan struct{})}, hashes: map[string]string{}, current: map[string]string{}, written: map[string]int{}, reached: map[string]time.Time{}}
	ca, err := cache.New(rc, cache.Options{Scheme: scheme, ByObject: map[client.Object]cache.ByObject{
		manager.NewSecretMetadata(): {Label: labels.SelectorFromSet(labels.Set{esv1.LabelManaged: esv1.LabelManagedValue})},
	}})
	if err != nil {
		return nil, err
	}
	inf, err := ca.GetInformer(ctx, manager.NewSecretMetadata())
	if err != nil {
		return nil, err
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.saw(obj, false) },
		UpdateFunc: func(_, obj any) { w.saw(obj, true) },
	})
	if err != nil {
		return nil, err
	}
	go func() { _ = ca.Start(ctx) }()
	if !ca.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the Secret watch did not sync")
	}
	return w, nil
}

func (w *writeLog) saw(obj any, update bool) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return
	}
	key := m.Namespace + "/" + m.Name
	hash := dataHash(m)
	w.mu.Lock()
	defer w.mu.Unlock()
	if update {
		w.written[key]++
		if _, done := w.reached[key]; !done && hash != w.hashes[key] {
			w.reached[key] = time.Now()
		}
	}
	w.current[key] = hash
	if _, ok := w.hashes[key]; !ok || w.since.IsZero() {
		w.hashes[key] = hash
	}
	w.notify()
}

// reset starts counting from now, remembering each Secret's data hash.
func (w *writeLog) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.since = time.Now()
	w.hashes = maps.Clone(w.current)
	w.written, w.reached = map[string]int{}, map[string]time.Time{}
}

func (w *writeLog) waitWritten(ctx context.Context, want map[string]bool) error {
	return w.wait(ctx, fmt.Sprintf("%d Secrets to take a changed value", len(want)), func() bool {
		for k := range want {
			if _, ok := w.reached[k]; !ok {
				return false
			}
		}
		return true
	})
}

// summary returns, for the Secrets of want that took the new value, how
// long after changed; how many of want were written more than once; and
// how many writes went to Secrets not in want.
func (w *writeLog) summary(want map[string]bool, changed time.Time) (reach []float64, twice, others int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, at := range w.reached {
		if want[k] {
			reach = append(reach, at.Sub(changed).Seconds())
		}
	}
	for k, n := range w.written {
		switch {
		case want[k] && n > 1:
			twice++
		case !want[k]:
			others += n
		}
	}
	return reach, twice, others
}

func dataHash(m *metav1.PartialObjectMetadata) string {
	for k, v := range m.Annotations {
		if strings.HasSuffix(k, "/data-hash") {
			return v
		}
	}
	return ""
}
