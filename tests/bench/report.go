package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

type results struct {
	ESOVersion           string    `json:"eso_version"`
	StartedAt            time.Time `json:"started_at"`
	Params               options   `json:"params"`
	ExternalSecrets      int       `json:"externalsecrets"`
	RefreshSeconds       float64   `json:"refresh_interval_seconds"`
	WindowRefreshSeconds float64   `json:"window_refresh_interval_seconds"`
	WindowSeconds        float64   `json:"window_seconds"`

	Sync struct {
		CreateSeconds   float64 `json:"create_seconds"`
		AllReadySeconds float64 `json:"all_ready_seconds"`
		PerSecond       float64 `json:"ready_per_second"`
		ESOCPUSeconds   float64 `json:"eso_cpu_seconds"`
		// ControlPlaneCPUSeconds is what the API server and etcd used
		// meanwhile, eso's start included.
		ControlPlaneCPUSeconds float64 `json:"control_plane_cpu_seconds"`
		// BenchCPUSeconds is the benchmark's own meanwhile: its watch of
		// the ExternalSecrets, which the raw client's side also pays.
		BenchCPUSeconds float64 `json:"bench_cpu_seconds"`
		RSSIdleMiB      float64 `json:"rss_idle_mib"`
		RSSAfterSyncMiB float64 `json:"rss_after_sync_mib"`
		RSSPeakMiB      float64 `json:"rss_peak_mib"`
		// RSSPerESKiB is what RSS grew by from idle to after the sync, per ExternalSecret.
		RSSPerESKiB float64     `json:"rss_per_externalsecret_kib"`
		ESO         esoCounters `json:"eso_counters"`
		API         apiWrites   `json:"apiserver_writes"`
		// Progress: when a hundredth, a quarter, half, three quarters and all were
		// Ready (tracker.quarters).
		Progress []float64 `json:"ready_progress_seconds"`
	} `json:"first_sync"`

	Steady struct {
		ESO               esoCounters `json:"eso_counters"`
		API               apiWrites   `json:"apiserver_writes"`
		ESOCPUSeconds     float64     `json:"eso_cpu_seconds"`
		ExpectedRefreshes float64     `json:"expected_refreshes"`
	} `json:"steady_state"`

	// NewReady*: ExternalSecrets created one by one under refresh, until Ready.
	NewReadyMillis    float64 `json:"new_externalsecret_ready_p50_ms"`
	NewReadyP99Millis float64 `json:"new_externalsecret_ready_p99_ms"`
	NewReadyMaxMillis float64 `json:"new_externalsecret_ready_max_ms"`

	// Raw is the same first sync's writes by a plain client-go program (-raw).
	Raw *rawResult `json:"raw_client,omitempty"`

	Remote struct {
		AllReadySeconds    float64 `json:"all_ready_seconds"`
		PerSecond          float64 `json:"ready_per_second"`
		ThroughputRatio    float64 `json:"throughput_ratio_grpc_over_in_process"`
		Calls              float64 `json:"grpc_calls"`
		CallP50Millis      float64 `json:"grpc_call_p50_ms"`
		CallP99Millis      float64 `json:"grpc_call_p99_ms"`
		ProviderRSSMiB     float64 `json:"provider_process_rss_mib"`
		ESOCPUSeconds      float64 `json:"eso_cpu_seconds"`
		ProviderCPUSeconds float64 `json:"provider_process_cpu_seconds"`
	} `json:"through_provider_process"`

	Push struct {
		PushSecrets     int          `json:"pushsecrets"`
		AllReadySeconds float64      `json:"all_ready_seconds"`
		PerSecond       float64      `json:"ready_per_second"`
		ESOCPUSeconds   float64      `json:"eso_cpu_seconds"`
		RSSAfterSyncMiB float64      `json:"rss_after_sync_mib"`
		FirstSync       pushCounters `json:"first_sync"`
		Quiet           pushCounters `json:"quiet_window"`
		Refreshing      pushCounters `json:"refresh_window"`
		ExpectedChecks  float64      `json:"expected_refresh_checks"`
		ChangeP50Millis float64      `json:"source_change_pushed_p50_ms"`
		ChangeP99Millis float64      `json:"source_change_pushed_p99_ms"`
	} `json:"pushsecrets"`

	Unrelated struct {
		CreateSeconds   float64 `json:"create_seconds"`
		RSSBeforeMiB    float64 `json:"rss_before_mib"`
		RSSAfterMiB     float64 `json:"rss_after_mib"`
		RSSDiffMiB      float64 `json:"rss_diff_mib"`
		RSSPeakMiB      float64 `json:"rss_peak_mib"`
		HeapBeforeMiB   float64 `json:"heap_inuse_before_mib"`
		HeapAfterMiB    float64 `json:"heap_inuse_after_mib"`
		ESOSecretWrites float64 `json:"eso_secret_writes"`
	} `json:"unrelated_secrets"`

	// Scale is the -scale-out run; when set, the rest is empty.
	Scale *scaleResults `json:"scale_out,omitempty"`

	Labelled struct {
		CreateSeconds         float64 `json:"create_seconds"`
		RestartRSSWithoutMiB  float64 `json:"restart_rss_without_mib"`
		RestartPeakWithoutMiB float64 `json:"restart_peak_without_mib"`
		RSSRunningMiB         float64 `json:"rss_running_mib"`
		PeakRunningMiB        float64 `json:"peak_running_mib"`
		RestartRSSWithMiB     float64 `json:"restart_rss_with_mib"`
		RestartPeakWithMiB    float64 `json:"restart_peak_with_mib"`
		PeakGrowthMiB         float64 `json:"restart_peak_growth_mib"`
	} `json:"labelled_secrets"`
}

func printTable(out io.Writer, r *results) {
	if r.Scale != nil {
		printScaleOut(out, r.Params, r.Scale)
		return
	}
	o := r.Params
	fmt.Fprintf(out, "\neso bench: %d ExternalSecrets (%d namespaces x %d, 2 keys each, Fake provider); eso --concurrent %d --client-qps %g --client-burst %d\n",
		r.ExternalSecrets, o.Namespaces, o.PerNamespace, o.Concurrent, o.ClientQPS, o.ClientBurst)
	printESOEnv(out, o)
	section := func(format string, args ...any) { fmt.Fprintf(out, "\n"+format+"\n", args...) }
	row := func(name, format string, args ...any) {
		fmt.Fprintf(out, "  %-44s "+format+"\n", append([]any{name}, args...)...)
	}
	s := &r.Sync
	section("first sync (refreshInterval %v)", o.Refresh)
	allReady(row, o, s.AllReadySeconds, s.PerSecond, s.CreateSeconds)
	row("eso CPU during sync", "%.2f s", s.ESOCPUSeconds)
	if r.Raw != nil {
		row("raw client-go, same writes (Secret + status)", "%.1f s  (%.0f/s; eso / raw: %.2f; last write %.1f s)", r.Raw.Seconds, r.Raw.PerSecond, r.Raw.Ratio, r.Raw.WritesSeconds)
		row("API server + etcd CPU: eso's sync / raw", "%.2f s / %.2f s", s.ControlPlaneCPUSeconds, r.Raw.ControlPlaneCPUSeconds)
		row("benchmark's CPU: its watch / + raw client", "%.2f s / %.2f s", s.BenchCPUSeconds, r.Raw.BenchCPUSeconds)
		row("1 %, a quarter, half, 3/4, all Ready: eso", "%s", seconds(s.Progress))
		row("  raw client", "%s", seconds(r.Raw.Progress))
	} else {
		row("API server + etcd CPU during sync", "%.2f s", s.ControlPlaneCPUSeconds)
	}
	row("eso RSS idle / after sync / peak", "%.1f / %.1f / %.1f MiB", s.RSSIdleMiB, s.RSSAfterSyncMiB, s.RSSPeakMiB)
	row("eso RSS per ExternalSecret (after - idle)", "%.1f KiB", s.RSSPerESKiB)
	row("eso writes: Secret / status", "%.0f / %.0f", s.ESO.SecretWrites, s.ESO.StatusWrites)
	row("API server writes: Secret / status / Event", "%.0f / %.0f / %.0f", s.API.Secrets, s.API.Statuses, s.API.Events)
	apiRequests(row, s.API, r.Raw)
	row("provider calls", "%.0f", s.ESO.ProviderCalls)
	row("ExternalSecret reconciles / syncs", "%.0f / %.0f", s.ESO.Reconciles, s.ESO.Syncs)
	st := &r.Steady
	section("steady state (%v window, refreshInterval %v, nothing changed)", o.Window, o.WindowRefresh)
	row("Secret writes", "%.0f", st.ESO.SecretWrites)
	row("ExternalSecret status writes", "%.0f", st.ESO.StatusWrites)
	row("API server writes: Secret / status / Event", "%.0f / %.0f / %.0f", st.API.Secrets, st.API.Statuses, st.API.Events)
	row("refreshes (syncs) / provider calls", "%.0f / %.0f  (%.0f if every interval were exact)", st.ESO.Syncs, st.ESO.ProviderCalls, st.ExpectedRefreshes)
	row("ExternalSecret reconciles in window", "%.0f", st.ESO.Reconciles)
	row("eso CPU in window", "%.2f s", st.ESOCPUSeconds)
	row(fmt.Sprintf("new ExternalSecret Ready under refresh (%d)", newSamples), "p50 %.0f / p99 %.0f / max %.0f ms", r.NewReadyMillis, r.NewReadyP99Millis, r.NewReadyMaxMillis)
	if o.Remote {
		rm := &r.Remote
		section("first sync through a provider process (eso --mode=provider, mTLS, loopback)")
		row("all Ready after", "%.1f s  (%.0f/s)", rm.AllReadySeconds, rm.PerSecond)
		row("throughput gRPC / in process", "%.2f", rm.ThroughputRatio)
		row("gRPC calls, latency p50 / p99 (core's view)", "%.0f, %.2f / %.2f ms", rm.Calls, rm.CallP50Millis, rm.CallP99Millis)
		row("CPU during sync: eso / provider process", "%.2f / %.2f s", rm.ESOCPUSeconds, rm.ProviderCPUSeconds)
		row("provider process RSS after", "%.1f MiB", rm.ProviderRSSMiB)
	}
	if o.Push {
		p := &r.Push
		section("%d PushSecrets (2 keys each, to the Fake stores)", p.PushSecrets)
		row("all Ready after", "%.1f s  (%.0f/s)", p.AllReadySeconds, p.PerSecond)
		row("provider pushes per PushSecret, first sync", "%.2f  (one per remote key: 2)", p.FirstSync.PushCalls/float64(p.PushSecrets))
		row("eso CPU during sync / RSS after", "%.2f s / %.1f MiB", p.ESOCPUSeconds, p.RSSAfterSyncMiB)
		row(fmt.Sprintf("quiet %v: provider pushes / status writes", o.Window), "%.0f / %.0f  (API server: %.0f status, %.0f Secret)",
			p.Quiet.PushCalls, p.Quiet.StatusWrites, p.Quiet.APIStatuses, p.Quiet.APISecrets)
		row(fmt.Sprintf("refreshing every %v: checks / status writes", o.WindowRefresh), "%.0f (%.0f if exact) / %.0f  (API server: %.0f status)",
			p.Refreshing.PushCalls, p.ExpectedChecks, p.Refreshing.StatusWrites, p.Refreshing.APIStatuses)
		row("source change to pushed, p50 / p99", "%.0f / %.0f ms  (%d changes)", p.ChangeP50Millis, p.ChangeP99Millis, pushChanges)
	}
	if o.Unrelated > 0 {
		u := &r.Unrelated
		section("%d unrelated %d KiB Secrets (no eso label, %d namespaces)", o.Unrelated, o.UnrelatedKiB, o.UnrelatedNS)
		row("created in", "%.1f s", u.CreateSeconds)
		row("eso RSS before / after / diff", "%.1f / %.1f / %+.1f MiB", u.RSSBeforeMiB, u.RSSAfterMiB, u.RSSDiffMiB)
		row("eso heap in use before / after", "%.1f / %.1f MiB", u.HeapBeforeMiB, u.HeapAfterMiB)
		row("eso RSS peak (whole run)", "%.1f MiB", u.RSSPeakMiB)
		row("eso Secret writes meanwhile", "%.0f", u.ESOSecretWrites)
	}
	if o.Labelled > 0 {
		l := &r.Labelled
		section("%d %d KiB Secrets labelled as eso's (as any tenant may)", o.Labelled, o.LabelledKiB)
		row("created in", "%.1f s", l.CreateSeconds)
		row("eso RSS / peak, running, after they were created", "%.1f / %.1f MiB", l.RSSRunningMiB, l.PeakRunningMiB)
		row("eso RSS after a restart without / with them", "%.1f / %.1f MiB", l.RestartRSSWithoutMiB, l.RestartRSSWithMiB)
		row("eso peak RSS (VmHWM) of a restart without / with them", "%.1f / %.1f MiB (%+.1f, bound %.0f)",
			l.RestartPeakWithoutMiB, l.RestartPeakWithMiB, l.PeakGrowthMiB, o.LabelledBound)
	}
}

// printESOEnv names the environment eso ran with beyond the bench's own
// (-eso-env), so a report of a tuned run does not read as one of defaults.
func printESOEnv(out io.Writer, o options) {
	if len(o.ESOEnv) > 0 {
		fmt.Fprintf(out, "eso's environment: %s\n", strings.Join(o.ESOEnv, " "))
	}
}

func printScaleOut(out io.Writer, o options, r *scaleResults) {
	fmt.Fprintf(out, "\neso bench, scale out: %d ExternalSecrets (%d namespaces x %d), %d replicas with --shards auto; each --concurrent %d --client-qps %g; lease %v\n",
		r.ExternalSecrets, o.Namespaces, o.PerNamespace, r.Replicas, o.Concurrent, o.ClientQPS, o.Lease)
	printESOEnv(out, o)
	row := func(name, format string, args ...any) {
		fmt.Fprintf(out, "  %-44s "+format+"\n", append([]any{name}, args...)...)
	}
	s := &r.Sync
	fmt.Fprintf(out, "\nfirst sync (refreshInterval %v)\n", o.Refresh)
	allReady(row, o, s.AllReadySeconds, s.PerSecond, s.CreateSeconds)
	if s.Raw != nil {
		row(fmt.Sprintf("raw client-go, same writes, %d at a time", r.Replicas*o.Concurrent), "%.1f s  (%.0f/s; eso / raw: %.2f; last write %.1f s)", s.Raw.Seconds, s.Raw.PerSecond, s.Raw.Ratio, s.Raw.WritesSeconds)
		row("API server + etcd CPU: eso's sync / raw", "%.2f s / %.2f s", s.ControlPlaneCPUSeconds, s.Raw.ControlPlaneCPUSeconds)
		row("1 %, a quarter, half, 3/4, all Ready: eso", "%s", seconds(s.Progress))
		row("  raw client", "%s", seconds(s.Raw.Progress))
	}
	row("eso CPU during sync, all replicas", "%.2f s", s.ESOCPUSeconds)
	row("ExternalSecret reconciles / syncs, all replicas", "%.0f / %.0f", s.Reconciles, s.Syncs)
	if s.Raw != nil && s.BenchCPUSeconds > 0 {
		row("benchmark's CPU: its watch / + raw client", "%.2f s / %.2f s", s.BenchCPUSeconds, s.Raw.BenchCPUSeconds)
	}
	if o.Precreate {
		apiRequests(row, s.API, s.Raw)
	}
	row("peak connections to the API server", "%d  (%.1f s after the first replica started)", s.PeakConnections, s.PeakAfterSeconds)
	for _, name := range slices.Sorted(maps.Keys(s.RSSMiB)) {
		row(name+": RSS after sync, share of namespaces", "%.1f MiB, %.1f %%", s.RSSMiB[name], 100*s.Share[name])
		row("  heap in use, goroutines", "%.1f MiB, %.0f", s.HeapMiB[name], s.Goroutines[name])
	}
	for _, h := range r.Handovers {
		fmt.Fprintf(out, "\n%s (under refresh every %v)\n", h.What, o.Refresh)
		row("namespaces moved", "%d", h.Moved)
		row("all namespaces worked again after", "%.1f s", h.WorkedAgainSeconds)
		row("eso's longest unworked namespace (bucket)", "≤ %g s", h.UnworkedMaxSeconds)
		what := "one remote secret per moved namespace"
		if o.ChangeAll {
			what = "every remote secret of the moved namespaces"
		}
		fmt.Fprintf(out, "  changed %.1f s in: %s\n", h.ChangeAfter, what)
		row("  reached its Secrets p50 / max", "%.1f / %.1f s  (%d Secrets, %d not reached)", h.ReachP50Seconds, h.ReachMaxSeconds, h.ChangedSecrets, h.Unreached)
		if h.FloorMaxSeconds > 0 {
			row("  floor: worked again, then raw-client writes", "%.1f / %.1f s", h.FloorP50Seconds, h.FloorMaxSeconds)
		}
		row("changed Secrets written twice / other writes", "%d / %d", h.WrittenTwice, h.OtherWrites)
	}
}

func writeJSON(path string, r *results) error {
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(raw, '\n'), 0o644)
}

// allReady is the first sync's row: timed from eso's start with the
// ExternalSecrets in place (-precreate), or from the first one created.
func allReady(row func(name, format string, args ...any), o options, seconds, perSecond, created float64) {
	if o.Precreate {
		row("all Ready after eso started", "%.1f s  (%.0f/s; created before it in %.1f s)", seconds, perSecond, created)
		return
	}
	row("all Ready after", "%.1f s  (%.0f/s; created in %.1f s)", seconds, perSecond, created)
}

// apiRequests reports what the API server was asked and sent to watches
// during a first sync, beside the raw client's, so what eso asks beyond
// its writes can be read off.
func apiRequests(row func(name, format string, args ...any), api apiWrites, raw *rawResult) {
	row("API server requests, eso's sync", "%s", largest(api.Requests, 8))
	row("API server watch events, eso's sync", "%s", largest(api.WatchEvents, 4))
	// The writes both make: how long the API server took over each.
	writes := []string{"POST secrets", "PATCH externalsecrets/status"}
	row("API server time per write, eso's sync", "%s", meanMilliseconds(api, writes...))
	if raw != nil {
		row("API server requests, raw client", "%s", largest(raw.API.Requests, 8))
		row("API server watch events, raw client", "%s", largest(raw.API.WatchEvents, 4))
		row("API server time per write, raw client", "%s", meanMilliseconds(raw.API, writes...))
	}
}

// seconds lists durations in seconds, as "12.0 / 25.3 / 40.1 s".
func seconds(ds []float64) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.1f", d)
	}
	return strings.Join(parts, " / ") + " s"
}
