// Package bench measures eso against a real API server: first-sync
// throughput, the API writes a sync costs, what an idle refresh costs, and how
// long a new ExternalSecret waits while refreshes are due. Run with make bench
// (ESO_BENCH_N sets the number of ExternalSecrets, default 1000).
package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/tests/testenv"
	"github.com/eso-dev/eso/tests/testeso"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		os.Exit(m.Run()) // no benchmark asked for (e.g. make test): no control plane needed
	}
	testenv.Main(m, &env)
}

const namespaces = 10

// apiWrites reads the API server's own request counters and returns the
// number of write requests (POST, PUT, PATCH, DELETE) per resource, with the
// subresource after a slash (e.g. "externalsecrets/status"). Every write eso
// sends is counted, including ones that change nothing.
func apiWrites(ctx context.Context, b *testing.B, rc *rest.Config) map[string]float64 {
	b.Helper()
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		b.Fatalf("reading API server metrics: %v", err)
	}
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	fam, ok := families["apiserver_request_total"]
	if !ok {
		b.Fatal("API server metrics lack apiserver_request_total")
	}
	for _, m := range fam.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		switch labels["verb"] {
		case "POST", "PUT", "PATCH", "DELETE":
		default:
			continue
		}
		key := labels["resource"]
		if labels["subresource"] != "" {
			key += "/" + labels["subresource"]
		}
		out[key] += m.GetCounter().GetValue()
	}
	return out
}

// writesSince is the number of eso's writes to Secrets, ExternalSecret status
// and Events between two readings of apiWrites.
func writesSince(before, after map[string]float64) (secrets, statuses, events int) {
	d := func(k string) int { return int(after[k] - before[k]) }
	return d("secrets"), d("externalsecrets/status"), d("events")
}

func BenchmarkSync(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("ESO_BENCH_N")); err == nil && v > 0 {
		n = v
	}
	for i := 0; i < b.N; i++ {
		runSync(b, n, i)
	}
}

func runSync(b *testing.B, n, round int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc := rest.CopyConfig(env.Config)
	rc.QPS, rc.Burst = 2000, 4000 // the benchmark's own client must not be the bottleneck
	c, err := client.New(rc, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	testeso.Run(b, env.Config, testeso.Config())

	label := fmt.Sprintf("bench-round-%d", round)
	var nss []string
	for i := range namespaces {
		ns := env.Namespace(b, fmt.Sprintf("bench-%d", i), map[string]string{"eso-bench": label})
		nss = append(nss, ns)
		mustCreate(ctx, b, c,
			&provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fake"}, Spec: provv1.FakeSpec{Data: []provv1.FakeSecret{
				{Key: "db", Value: `{"user":"app","password":"pw"}`},
			}}},
			&ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "store"}, Spec: ssv2.SecretStoreSpec{
				ProviderConfig: ssv2.ProviderConfig{ProviderRef: ssv2.ProviderRef{Kind: "Fake", Name: "fake"}}}},
		)
	}
	before := apiWrites(ctx, b, rc)

	// First sync of n ExternalSecrets refreshing every 2s.
	b.ResetTimer()
	start := time.Now()
	parallel(n, 32, func(i int) {
		mustCreate(ctx, b, c, externalSecret(nss[i%namespaces], fmt.Sprintf("es-%d", i), 2*time.Second))
	})
	created := time.Since(start)
	waitAllReady(ctx, b, c, nss, n, 5*time.Minute)
	firstSync := time.Since(start)
	b.StopTimer()
	time.Sleep(time.Second) // events are sent asynchronously
	after := apiWrites(ctx, b, rc)
	sw, st, ev := writesSince(before, after)
	b.ReportMetric(float64(n)/firstSync.Seconds(), "synced/s")
	b.ReportMetric(float64(sw+st+ev)/float64(n), "writes/first-sync")
	b.Logf("n=%d in %d namespaces: created in %v, all Ready after %v; API writes: %d Secret, %d ExternalSecret status, %d Event",
		n, namespaces, created.Round(time.Millisecond), firstSync.Round(time.Millisecond), sw, st, ev)

	// Idle: with refreshInterval 2s every ExternalSecret reads its provider
	// again twice in 5s; nothing changed, so nothing may be written.
	before = apiWrites(ctx, b, rc)
	time.Sleep(5 * time.Second)
	sw, st, ev = writesSince(before, apiWrites(ctx, b, rc))
	idle := sw + st + ev
	b.ReportMetric(float64(idle), "writes/idle-5s")

	// A new ExternalSecret while n refreshes come due every 2s.
	start = time.Now()
	fresh := externalSecret(nss[0], "fresh", time.Hour)
	mustCreate(ctx, b, c, fresh)
	waitReady(ctx, b, c, fresh, time.Minute)
	latency := time.Since(start)
	b.ReportMetric(float64(latency.Milliseconds()), "ms/new-under-refresh")

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "MiB-heap")
	b.Logf("idle 5s: %d Secret, %d ExternalSecret status, %d Event writes", sw, st, ev)
	b.Logf("idle 5s: %d writes; new ExternalSecret Ready after %v under refresh load; heap in use %.1f MiB (eso + benchmark client)",
		idle, latency.Round(time.Millisecond), float64(ms.HeapInuse)/(1<<20))
}

func externalSecret(ns, name string, refresh time.Duration) *esv1.ExternalSecret {
	return &esv1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: esv1.ExternalSecretSpec{
			SecretStoreRef:  esv1.SecretStoreRef{Name: "store", Kind: "SecretStore"},
			RefreshInterval: &metav1.Duration{Duration: refresh},
			Data: []esv1.ExternalSecretData{{SecretKey: "password",
				RemoteRef: esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "password"}}},
			DataFrom: []esv1.ExternalSecretDataFromRemoteRef{{Extract: &esv1.ExternalSecretDataRemoteRef{Key: "db"}}},
		},
	}
}

func mustCreate(ctx context.Context, b *testing.B, c client.Client, objs ...client.Object) {
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			b.Errorf("creating %s: %v", o.GetName(), err)
		}
	}
}

func parallel(n, workers int, fn func(i int)) {
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

func isReady(es *esv1.ExternalSecret) bool {
	c := meta.FindStatusCondition(es.Status.Conditions, esv1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == es.Generation
}

func waitAllReady(ctx context.Context, b *testing.B, c client.Client, nss []string, n int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ready := 0
		for _, ns := range nss {
			var list esv1.ExternalSecretList
			if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
				b.Fatal(err)
			}
			for i := range list.Items {
				if isReady(&list.Items[i]) {
					ready++
				}
			}
		}
		if ready >= n {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.Fatalf("not all %d ExternalSecrets Ready after %v", n, timeout)
}

func waitReady(ctx context.Context, b *testing.B, c client.Client, es *esv1.ExternalSecret, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(es), es); err == nil && isReady(es) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.Fatalf("%s not Ready after %v", es.Name, timeout)
}
