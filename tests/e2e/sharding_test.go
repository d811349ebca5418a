//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// shardRingLabel marks the replicas' membership Leases with --shards=auto;
// its value is the ring's name, the leader election ID.
const shardRingLabel = "sharding.external-secrets.io/ring"

// TestShardedReplicas runs three active replicas (sharding.enabled) over 30
// namespaces, each with a Fake store and three ExternalSecrets: every
// replica holds a membership Lease and works a share of the namespaces, no
// share empty, and together they work each namespace once. One replica's
// Pod is then force-deleted, as a kill: a change at the store of every
// namespace, those the dead replica worked among them, reaches its Secret
// within a lease duration and 20 s, written once, and the survivors and the
// replacement Pod again split every namespace between them.
func TestShardedReplicas(t *testing.T) {
	ctx := context.Background()
	startCluster(t)
	installFromBundle(t, unpackBundle(t), "--set", "replicas=3", "--set", "sharding.enabled=true",
		// Plain HTTP, so that the test reads each replica's metrics itself.
		"--set", "metrics.secure=false")
	f := &fleet{perNS: 3, refresh: "10s"}
	var docs []string
	for i := range 30 {
		ns := fmt.Sprintf("shard-%02d", i)
		f.namespaces = append(f.namespaces, ns)
		docs = append(docs, f.manifests(ns, "v1"))
	}
	apply(t, strings.Join(docs, "---\n"))
	f.waitReady(t, 2*time.Minute)

	before := waitShardsCover(t, 3, "")
	victim := ""
	for pod, owned := range before {
		if victim == "" || owned > before[victim] || owned == before[victim] && pod < victim {
			victim = pod
		}
	}
	rec := record(t, f.namespaces)
	allowed := map[string]int{}
	const value = "changed-after-the-kill"
	kubectl(t, "-n", esoNamespace, "delete", "pod", victim, "--force", "--grace-period=0")
	gone := time.Now()
	docs = docs[:0]
	for _, ns := range f.namespaces {
		docs = append(docs, f.store(ns, "v1", map[int]string{0: value}))
		allowed[ns+"/es-0"] = 1
	}
	apply(t, strings.Join(docs, "---\n"))
	within := leaseDuration + 20*time.Second
	eventually(t, within-time.Since(gone), "the change in every namespace's Secret after "+victim+" (working "+
		strconv.Itoa(before[victim])+" namespaces) was killed", func() error {
		var behind []string
		for _, ns := range f.namespaces {
			s, err := cluster.Client.CoreV1().Secrets(ns).Get(ctx, "es-0", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if string(s.Data["value"]) != value {
				behind = append(behind, ns)
			}
		}
		if len(behind) > 0 {
			return fmt.Errorf("%d namespaces still hold the old value: %v", len(behind), behind)
		}
		return nil
	})
	t.Logf("%s killed: every change written %s later", victim, time.Since(gone).Round(100*time.Millisecond))

	waitAvailable(t, esoNamespace, "app.kubernetes.io/instance="+esoRelease)
	after := waitShardsCover(t, 3, victim)
	for pod := range after {
		if m, err := scrapeMetrics(podIPOf(t, pod)); err == nil {
			t.Logf("%s: gained %v, released %v namespaces; %v handovers waited %vs in all", pod,
				m[`eso_shard_handovers_total{direction="gained"}`], m[`eso_shard_handovers_total{direction="released"}`],
				m["eso_shard_handover_unworked_seconds_count"], m["eso_shard_handover_unworked_seconds_sum"])
		}
	}
	time.Sleep(5 * time.Second)
	rec.check(t, allowed)
	f.waitReady(t, time.Second)
}

// waitShardsCover waits until replicas Pods of eso (none of them not) run,
// each with a membership Lease of the ring (and, when no replica went
// away, no other Lease in it) and seeing replicas members,
// each working at least one namespace and all together, by their
// eso_shard_namespaces_owned, as many as the cluster has: every namespace
// worked by exactly one. It returns each Pod's count.
func waitShardsCover(t *testing.T, replicas int, not string) map[string]int {
	t.Helper()
	ctx := context.Background()
	var owned map[string]int
	eventually(t, 2*time.Minute, fmt.Sprintf("%d replicas splitting every namespace", replicas), func() error {
		pods, err := cluster.Client.CoreV1().Pods(esoNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + esoRelease})
		if err != nil {
			return err
		}
		var live []corev1.Pod
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Name != not && ready(&p) && p.Status.PodIP != "" {
				live = append(live, p)
			}
		}
		if len(live) != replicas {
			return fmt.Errorf("%d of %d replicas ready: %s", len(live), replicas, podStates(ctx, esoNamespace, "app.kubernetes.io/instance="+esoRelease))
		}
		leases, err := cluster.Client.CoordinationV1().Leases(esoNamespace).List(ctx, metav1.ListOptions{LabelSelector: shardRingLabel + "=" + leaderLease})
		if err != nil {
			return err
		}
		var names []string
		for _, l := range leases.Items {
			if !strings.HasPrefix(l.Name, "eso-shard-") {
				return fmt.Errorf("Lease %s in the ring is not named eso-shard-*", l.Name)
			}
			names = append(names, l.Name)
		}
		// A replica killed leaves its Lease behind until the others judge
		// it expired and delete it.
		if not == "" && len(names) != replicas {
			return fmt.Errorf("membership Leases %v, want %d", names, replicas)
		}
		namespaces, err := cluster.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		owned = map[string]int{}
		sum := 0
		for _, p := range live {
			if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "eso-shard-"+p.Name+"-") }) {
				return fmt.Errorf("%s holds no membership Lease among %v", p.Name, names)
			}
			m, err := scrapeMetrics(p.Status.PodIP)
			if err != nil {
				return fmt.Errorf("%s's metrics: %v", p.Name, err)
			}
			if members := m["eso_shard_members"]; int(members) != replicas {
				return fmt.Errorf("%s sees %v members, want %d", p.Name, members, replicas)
			}
			n, ok := m["eso_shard_namespaces_owned"]
			if !ok {
				return fmt.Errorf("%s has no eso_shard_namespaces_owned", p.Name)
			}
			owned[p.Name] = int(n)
			sum += int(n)
		}
		for pod, n := range owned {
			if n == 0 {
				return fmt.Errorf("%s works no namespace: %v", pod, owned)
			}
		}
		if sum != len(namespaces.Items) {
			return fmt.Errorf("the replicas work %v namespaces, %d in all, and the cluster has %d", owned, sum, len(namespaces.Items))
		}
		return nil
	})
	t.Logf("namespaces worked per replica: %v", owned)
	return owned
}

// scrapeMetrics reads eso's /metrics (plain HTTP, metrics.secure=false) at
// a Pod's address, which the host reaches over the bridge: each sample's
// value by its name and labels as written, e.g.
// `eso_shard_handovers_total{direction="gained"}`.
func scrapeMetrics(ip string) (map[string]float64, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + ip + ":8080/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 16<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// podIPOf returns the address of eso's Pod name.
func podIPOf(t *testing.T, name string) string {
	t.Helper()
	p, err := cluster.Client.CoreV1().Pods(esoNamespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Status.PodIP
}
