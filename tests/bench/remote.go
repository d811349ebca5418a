package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// certsNamespace is where core keeps the provider process's certificates
// (--provider-certificates-namespace) during the benchmark.
const certsNamespace = "eso-bench-certs"

// createCertsNamespace creates certsNamespace with a client of its own: the
// benchmark's clients come later, with eso.
func createCertsNamespace(ctx context.Context, kubeconfig string) error {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	c, err := client.New(rc, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	return createNamespace(ctx, c, certsNamespace)
}

// remote runs the first-sync workload again, in a fresh environment,
// through a provider process: eso --mode=provider serving the Fake provider
// over mTLS, with the certificates core issued. Same namespaces, stores and
// ExternalSecrets as in process. It reports throughput against in process
// and the per-call latency core saw (eso_grpc_client_request_duration_seconds).
func (b *bench) remote(ctx context.Context, res *results) error {
	o := b.o
	n := o.Namespaces * o.PerNamespace
	r := &res.Remote
	progress("starting a provider process (eso --mode=provider, mTLS with the certificates core issued)")
	address, provider, err := b.startProvider(ctx)
	if err != nil {
		return err
	}
	defer provider.stop(15 * time.Second)
	clientTLS, err := b.secret(ctx, certsNamespace, "eso-provider-client-tls")
	if err != nil {
		return err
	}

	progress("creating %d namespaces with a remote SecretStore each", o.Namespaces)
	var nss []string
	for i := range o.Namespaces {
		nss = append(nss, fmt.Sprintf("bench-remote-%d", i))
	}
	err = parallel(ctx, o.Namespaces, createWorkers, func(i int) error {
		ns := nss[i]
		if err := createNamespace(ctx, b.c, ns); err != nil {
			return err
		}
		cert := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "core-tls"}, Type: corev1.SecretTypeTLS, Data: clientTLS.Data}
		if err := b.c.Create(ctx, cert); err != nil {
			return err
		}
		if err := b.c.Create(ctx, fakeProvider(ns)); err != nil {
			return err
		}
		store := secretStore(ns)
		store.Spec.ProviderConfig.Address = address
		store.Spec.ProviderConfig.Auth = &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: "core-tls"}}
		return b.c.Create(ctx, store)
	})
	if err != nil {
		return fmt.Errorf("creating remote namespaces and stores: %w", err)
	}
	if err := withTimeout(ctx, time.Minute, func(ctx context.Context) error { return waitStoresReady(ctx, b.c, o.Namespaces) }); err != nil {
		return b.withESO(err)
	}

	progress("creating %d ExternalSecrets on the remote stores and waiting for all to be Ready", n)
	before, err := scrape(ctx, b.metricsURL)
	if err != nil {
		return err
	}
	coreCPU, err := b.cpu()
	if err != nil {
		return err
	}
	providerCPU, err := cpuSeconds(provider.pid())
	if err != nil {
		return err
	}
	start := time.Now()
	err = parallel(ctx, n, createWorkers, func(i int) error {
		return b.c.Create(ctx, externalSecret(nss[i%o.Namespaces], fmt.Sprintf("es-%d", i/o.Namespaces), o.Refresh))
	})
	if err != nil {
		return fmt.Errorf("creating remote ExternalSecrets: %w", err)
	}
	if err := withTimeout(ctx, 5*time.Minute, func(ctx context.Context) error { return b.track.waitAllReady(ctx, n, o.Refresh) }); err != nil {
		return b.withESO(err)
	}
	r.AllReadySeconds = time.Since(start).Seconds()
	r.PerSecond = float64(n) / r.AllReadySeconds
	if after, err := b.cpu(); err == nil {
		r.ESOCPUSeconds = round2(after - coreCPU)
	}
	if after, err := cpuSeconds(provider.pid()); err == nil {
		r.ProviderCPUSeconds = round2(after - providerCPU)
	}
	if res.Sync.PerSecond > 0 {
		r.ThroughputRatio = round2(r.PerSecond / res.Sync.PerSecond)
	}
	after, err := scrape(ctx, b.metricsURL)
	if err != nil {
		return err
	}
	calls := bucketDelta(before, after, "eso_grpc_client_request_duration_seconds")
	r.Calls = calls.total
	r.CallP50Millis = round2(calls.quantile(0.5) * 1000)
	r.CallP99Millis = round2(calls.quantile(0.99) * 1000)
	if m, err := readMemory(provider.pid()); err == nil {
		r.ProviderRSSMiB = mib(m.RSS)
	}
	return provider.exited()
}

// startProvider waits for the certificates core issues, writes the server's
// to files and starts eso --mode=provider with them. The address uses the
// name the server certificate carries.
func (b *bench) startProvider(ctx context.Context) (string, *proc, error) {
	var server *corev1.Secret
	err := withTimeout(ctx, 2*time.Minute, func(ctx context.Context) error {
		for {
			s, err := b.secret(ctx, certsNamespace, "eso-provider-server-tls")
			if err == nil {
				server = s
				return nil
			}
			if err := sleep(ctx, time.Second); err != nil {
				return fmt.Errorf("waiting for the certificates core issues: %w", err)
			}
		}
	})
	if err != nil {
		return "", nil, err
	}
	files := map[string]string{}
	for _, key := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey, "ca.crt"} {
		path := filepath.Join(b.work, "provider-"+key)
		if err := os.WriteFile(path, server.Data[key], 0o600); err != nil {
			return "", nil, err
		}
		files[key] = path
	}
	grpcPort, err := freePort()
	if err != nil {
		return "", nil, err
	}
	healthPort, err := freePort()
	if err != nil {
		return "", nil, err
	}
	p, err := startProc("provider", filepath.Join(b.work, "provider.log"), b.esoBin, "--mode=provider",
		"--kubeconfig", b.kubeconfig,
		"--grpc-bind-address", fmt.Sprintf("127.0.0.1:%d", grpcPort),
		"--tls-cert-file", files[corev1.TLSCertKey], "--tls-key-file", files[corev1.TLSPrivateKeyKey], "--tls-client-ca-file", files["ca.crt"],
		"--metrics-bind-address", "0",
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", healthPort),
		"--log-level", b.o.LogLevel)
	if err != nil {
		return "", nil, err
	}
	if err := waitHealthy(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort), p, time.Minute); err != nil {
		p.stop(5 * time.Second)
		return "", nil, err
	}
	return fmt.Sprintf("localhost:%d", grpcPort), p, nil
}

func (b *bench) secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	var s corev1.Secret
	return &s, b.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s)
}

// histogram is a histogram's observations between two scrapes.
type histogram struct {
	bounds []float64 // upper bounds, ascending
	counts []float64 // cumulative counts per bound
	total  float64
}

// bucketDelta sums a histogram family over its series, after minus before.
func bucketDelta(before, after map[string]*dto.MetricFamily, name string) histogram {
	cum := func(fams map[string]*dto.MetricFamily) (map[float64]float64, float64) {
		byBound, total := map[float64]float64{}, 0.0
		fam, ok := fams[name]
		if !ok {
			return byBound, 0
		}
		for _, m := range fam.GetMetric() {
			h := m.GetHistogram()
			total += float64(h.GetSampleCount())
			for _, b := range h.GetBucket() {
				byBound[b.GetUpperBound()] += float64(b.GetCumulativeCount())
			}
		}
		return byBound, total
	}
	b, bt := cum(before)
	a, at := cum(after)
	h := histogram{total: at - bt}
	for bound := range a {
		h.bounds = append(h.bounds, bound)
	}
	sort.Float64s(h.bounds)
	for _, bound := range h.bounds {
		h.counts = append(h.counts, a[bound]-b[bound])
	}
	return h
}

// quantile estimates the q-quantile, interpolating linearly within the
// bucket it falls in (as Prometheus' histogram_quantile does).
func (h histogram) quantile(q float64) float64 {
	if h.total == 0 {
		return math.NaN()
	}
	rank := q * h.total
	lower, prevCount := 0.0, 0.0
	for i, bound := range h.bounds {
		if h.counts[i] >= rank {
			if math.IsInf(bound, 1) {
				return lower
			}
			inBucket := h.counts[i] - prevCount
			if inBucket == 0 {
				return bound
			}
			return lower + (bound-lower)*(rank-prevCount)/inBucket
		}
		lower, prevCount = bound, h.counts[i]
	}
	return lower
}
