package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, esv1.AddToScheme, esv1alpha1.AddToScheme, ssv2.AddToScheme, provv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Objects of one benchmark namespace: a Fake provider configuration, a
// SecretStore naming it, and ExternalSecrets reading two properties of one
// remote key through it: soloKey for the namespace's first, soloES, and
// sharedKey for the others, so a handover can change one remote secret
// alone or all of them. The values are dummies; they are never printed.
const (
	sharedKey = "db"
	soloKey   = "db-solo"
	soloES    = "es-0"
)

func fakeProvider(ns string) *provv1.Fake {
	value := `{"user":"app","password":"not-a-real-password"}`
	return &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fake"}, Spec: provv1.FakeSpec{Data: []provv1.FakeSecret{
		{Key: sharedKey, Value: value}, {Key: soloKey, Value: value},
	}}}
}

// setFakeValue changes the value of key in f, keeping its other keys.
func setFakeValue(f *provv1.Fake, key, value string) {
	for i := range f.Spec.Data {
		if f.Spec.Data[i].Key == key {
			f.Spec.Data[i].Value = value
			return
		}
	}
	f.Spec.Data = append(f.Spec.Data, provv1.FakeSecret{Key: key, Value: value})
}

func secretStore(ns string) *ssv2.SecretStore {
	return &ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "store"}, Spec: ssv2.SecretStoreSpec{
		ProviderConfig: ssv2.ProviderConfig{ProviderRef: ssv2.ProviderRef{Kind: "Fake", Name: "fake"}}}}
}

func externalSecret(ns, name string, refresh time.Duration) *esv1.ExternalSecret {
	key := sharedKey
	if name == soloES {
		key = soloKey
	}
	return &esv1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: esv1.ExternalSecretSpec{
			SecretStoreRef:  &esv1.SecretStoreRef{Name: "store", Kind: "SecretStore"},
			RefreshInterval: &metav1.Duration{Duration: refresh},
			Data: []esv1.ExternalSecretData{
				{SecretKey: "user", RemoteRef: esv1.ExternalSecretDataRemoteRef{Key: key, Property: "user"}},
				{SecretKey: "password", RemoteRef: esv1.ExternalSecretDataRemoteRef{Key: key, Property: "password"}},
			},
		},
	}
}

// setRefresh changes an ExternalSecret's refreshInterval with a merge patch,
// which touches nothing else.
func setRefresh(ctx context.Context, c client.Client, ns, name string, refresh time.Duration) error {
	body := fmt.Appendf(nil, `{"spec":{"refreshInterval":%q}}`, refresh.String())
	es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	return c.Patch(ctx, es, client.RawPatch(types.MergePatchType, body))
}

// createStoreNamespaces creates namespaces bench-0 to bench-(n-1), each
// with a Fake provider and a SecretStore over it, and returns their names.
func createStoreNamespaces(ctx context.Context, c client.Client, n int) ([]string, error) {
	progress("creating %d namespaces with a Fake provider and a SecretStore each", n)
	nss := make([]string, n)
	for i := range nss {
		nss[i] = fmt.Sprintf("bench-%d", i)
	}
	err := parallel(ctx, n, createWorkers, func(i int) error {
		if err := createNamespace(ctx, c, nss[i]); err != nil {
			return err
		}
		if err := c.Create(ctx, fakeProvider(nss[i])); err != nil {
			return err
		}
		return c.Create(ctx, secretStore(nss[i]))
	})
	if err != nil {
		return nil, fmt.Errorf("creating namespaces and stores: %w", err)
	}
	return nss, nil
}

// unrelatedSecret is a Secret eso has no business with: no eso label.
func unrelatedSecret(ns, name string, payload []byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{"blob": payload}}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails on Linux
	return b
}

func createNamespace(ctx context.Context, c client.Client, name string) error {
	return c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"eso-bench": "true"}}})
}

// parallel runs fn(0..n-1) on workers goroutines and returns the first error;
// after an error or cancellation no new calls start.
func parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	var (
		wg       sync.WaitGroup
		next     atomic.Int64
		firstErr error
		once     sync.Once
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n && ctx.Err() == nil; i = int(next.Add(1)) - 1 {
				if err := fn(i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// waitStoresReady polls until want SecretStores are Ready. There are few
// stores, so polling costs little.
func waitStoresReady(ctx context.Context, c client.Client, want int) error {
	for {
		var list ssv2.SecretStoreList
		if err := c.List(ctx, &list); err != nil {
			return err
		}
		ready := 0
		for _, s := range list.Items {
			if meta.IsStatusConditionTrue(s.Status.Conditions, ssv2.ConditionReady) {
				ready++
			}
		}
		if ready >= want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d SecretStores Ready: %w", ready, want, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// tracker follows every ExternalSecret through a watch, so waiting for
// readiness neither polls the API server (which would compete with eso for
// the two CPUs) nor misses a transition.
type tracker struct {
	changes
	objs map[string]esState
	// ready counts the Ready ones by refreshInterval, kept as objs
	// changes: a waiter woken on every change must not scan them all
	// (at 100,000 that would take a core from eso).
	ready map[time.Duration]int
	// readyAt is when an ExternalSecret turned Ready, each time one did,
	// in order: how a sync progressed, not only when it ended. One that
	// left Ready and came back counts twice; in a first sync none does.
	readyAt []time.Time
}

// changes lets a watch's handlers announce a change (under mu) and waiters
// block until a condition over the watched state holds.
type changes struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
}

// notify announces a change; callers hold mu.
func (c *changes) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// wait blocks until cond (called with mu held) is true.
func (c *changes) wait(ctx context.Context, what string, cond func() bool) error {
	for {
		c.mu.Lock()
		ok, ch := cond(), c.changed
		c.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}

type esState struct {
	ready   bool // Ready=True for the current generation
	refresh time.Duration
}

func startTracker(ctx context.Context, rc *rest.Config, scheme *runtime.Scheme) (*tracker, error) {
	t := &tracker{changes: changes{changed: make(chan struct{})}, objs: map[string]esState{}, ready: map[time.Duration]int{}}
	ca, err := cache.New(rc, cache.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	inf, err := ca.GetInformer(ctx, &esv1.ExternalSecret{})
	if err != nil {
		return nil, err
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    t.update,
		UpdateFunc: func(_, obj any) { t.update(obj) },
		DeleteFunc: t.remove,
	})
	if err != nil {
		return nil, err
	}
	go func() { _ = ca.Start(ctx) }()
	if !ca.WaitForCacheSync(ctx) {
		return nil, errors.New("ExternalSecret watch did not sync")
	}
	return t, nil
}

func (t *tracker) update(obj any) {
	es, ok := obj.(*esv1.ExternalSecret)
	if !ok {
		return
	}
	c := meta.FindStatusCondition(es.Status.Conditions, esv1.ConditionReady)
	st := esState{ready: c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == es.Generation}
	if es.Spec.RefreshInterval != nil {
		st.refresh = es.Spec.RefreshInterval.Duration
	}
	t.set(es.Namespace+"/"+es.Name, &st)
}

func (t *tracker) remove(obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if es, ok := obj.(*esv1.ExternalSecret); ok {
		t.set(es.Namespace+"/"+es.Name, nil)
	}
}

func (t *tracker) set(key string, st *esState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	old, had := t.objs[key]
	if had && old.ready {
		t.ready[old.refresh]--
	}
	if st == nil {
		delete(t.objs, key)
	} else {
		t.objs[key] = *st
		if st.ready {
			t.ready[st.refresh]++
			if !had || !old.ready {
				t.readyAt = append(t.readyAt, time.Now())
			}
		}
	}
	t.notify()
}

// quarterPoints are the points of a sync the bench reports: when the
// first hundredth, a quarter, half, three quarters and all of it were
// Ready. The first hundredth shows how long a start took before work
// flowed.
var quarterPoints = []float64{0.01, 0.25, 0.5, 0.75, 1}

// quarters is, for each of quarterPoints of n, how long after start that
// many ExternalSecrets had turned Ready (0 when not yet).
func (t *tracker) quarters(start time.Time, n int) []float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]float64, len(quarterPoints))
	for i, f := range quarterPoints {
		k := int(math.Ceil(f*float64(n))) - 1
		if k >= 0 && k < len(t.readyAt) {
			out[i] = round2(t.readyAt[k].Sub(start).Seconds())
		}
	}
	return out
}

// countReady counts Ready ExternalSecrets whose refreshInterval is refresh
// (any interval when refresh is 0). Callers hold t.mu.
func (t *tracker) countReady(refresh time.Duration) int {
	if refresh != 0 {
		return t.ready[refresh]
	}
	n := 0
	for _, c := range t.ready {
		n += c
	}
	return n
}

func (t *tracker) waitAllReady(ctx context.Context, n int, refresh time.Duration) error {
	return t.wait(ctx, fmt.Sprintf("%d ExternalSecrets Ready with refreshInterval %v", n, refresh),
		func() bool { return t.countReady(refresh) >= n })
}

func (t *tracker) waitReady(ctx context.Context, key string) error {
	return t.wait(ctx, key+" Ready", func() bool { return t.objs[key].ready })
}

// scrape reads a Prometheus text endpoint.
func scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	raw, err := get(ctx, url)
	if err != nil {
		return nil, err
	}
	return parseMetrics(raw)
}

func parseMetrics(raw []byte) (map[string]*dto.MetricFamily, error) {
	// eso's metric names are plain; UTF-8 validation accepts them and is
	// what the parser requires a choice of.
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(raw))
}

// sum adds the values of a counter or gauge family over the series whose
// labels include match.
func sum(fams map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	fam, ok := fams[name]
	if !ok {
		return 0 // a counter vector has no series until first incremented
	}
	total := 0.0
outer:
	for _, m := range fam.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range match {
			if labels[k] != v {
				continue outer
			}
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Untyped != nil:
			total += m.GetUntyped().GetValue()
		}
	}
	return total
}

// esoCounters are eso's own accounting, from its metrics endpoint.
type esoCounters struct {
	SecretWrites  float64 `json:"secret_writes"`  // eso_secret_writes_total: creates, updates and deletes of target Secrets
	StatusWrites  float64 `json:"status_writes"`  // eso_status_writes_total{kind="ExternalSecret"}
	ProviderCalls float64 `json:"provider_calls"` // externalsecret_provider_api_calls_count
	Syncs         float64 `json:"syncs"`          // externalsecret_sync_calls_total: reconciles that read the provider
	Reconciles    float64 `json:"reconciles"`     // controller_runtime_reconcile_total of the externalsecret controller: all its reconciles
	HeapInUse     float64 `json:"-"`              // go_memstats_heap_inuse_bytes, a gauge: not part of differences
	// AnyStatusWrites counts status writes of every kind, to tell when eso
	// has gone quiet.
	AnyStatusWrites float64 `json:"-"`
}

func readESO(ctx context.Context, url string) (esoCounters, error) {
	fams, err := scrape(ctx, url)
	if err != nil {
		return esoCounters{}, fmt.Errorf("reading eso metrics: %w", err)
	}
	return countersOf(fams), nil
}

// countersOf reads eso's counters from a scrape of its metrics.
func countersOf(fams map[string]*dto.MetricFamily) esoCounters {
	return esoCounters{
		SecretWrites:    sum(fams, "eso_secret_writes_total", nil),
		StatusWrites:    sum(fams, "eso_status_writes_total", map[string]string{"kind": "ExternalSecret"}),
		ProviderCalls:   sum(fams, "externalsecret_provider_api_calls_count", nil),
		Syncs:           sum(fams, "externalsecret_sync_calls_total", nil),
		Reconciles:      sum(fams, "controller_runtime_reconcile_total", map[string]string{"controller": "externalsecret"}),
		HeapInUse:       sum(fams, "go_memstats_heap_inuse_bytes", nil),
		AnyStatusWrites: sum(fams, "eso_status_writes_total", nil),
	}
}

func (a esoCounters) minus(b esoCounters) esoCounters {
	return esoCounters{
		SecretWrites:  a.SecretWrites - b.SecretWrites,
		StatusWrites:  a.StatusWrites - b.StatusWrites,
		ProviderCalls: a.ProviderCalls - b.ProviderCalls,
		Syncs:         a.Syncs - b.Syncs,
		Reconciles:    a.Reconciles - b.Reconciles,
	}
}

// apiWrites are write requests (POST, PUT, PATCH, DELETE) as the API server
// counts them in apiserver_request_total: every write sent, including ones
// that change nothing. They count every client, so they are read only while
// the benchmark itself writes nothing of the kind.
type apiWrites struct {
	Secrets  float64 `json:"secrets"`
	Statuses float64 `json:"externalsecrets_status"`
	Events   float64 `json:"events"`
	// Requests counts every request by "VERB resource[/subresource]", the
	// writes above included: what a client asks beyond its writes (its
	// Lists, watches, reads) is the difference between two runs.
	Requests map[string]float64 `json:"requests,omitempty"`
	// WatchEvents counts the events the API server sent to watches, by
	// resource.
	WatchEvents map[string]float64 `json:"watch_events,omitempty"`
	// RequestSeconds is the time the API server took over the requests,
	// keyed as Requests (apiserver_request_duration_seconds): with
	// Requests, the mean time of each kind of request.
	RequestSeconds map[string]float64 `json:"request_seconds,omitempty"`
}

func readAPIWrites(ctx context.Context, cs kubernetes.Interface) (apiWrites, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return apiWrites{}, fmt.Errorf("reading API server metrics: %w", err)
	}
	fams, err := parseMetrics(raw)
	if err != nil {
		return apiWrites{}, err
	}
	if _, ok := fams["apiserver_request_total"]; !ok {
		return apiWrites{}, errors.New("API server metrics lack apiserver_request_total")
	}
	requestKey := func(l map[string]string) string {
		key := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		return key
	}
	requests := byLabels(fams["apiserver_request_total"], requestKey)
	writes := func(resource string) float64 {
		total := 0.0
		for _, verb := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			total += requests[verb+" "+resource]
		}
		return total
	}
	return apiWrites{
		Secrets:  writes("secrets"),
		Statuses: writes("externalsecrets/status"),
		Events:   writes("events"),
		Requests: requests,
		WatchEvents: byLabels(fams["apiserver_watch_events_total"], func(l map[string]string) string {
			if r := l["resource"]; r != "" {
				return r
			}
			return l["kind"] // its label before Kubernetes 1.32
		}),
		RequestSeconds: byLabels(fams["apiserver_request_duration_seconds"], requestKey),
	}, nil
}

func (a apiWrites) minus(b apiWrites) apiWrites {
	return apiWrites{Secrets: a.Secrets - b.Secrets, Statuses: a.Statuses - b.Statuses, Events: a.Events - b.Events,
		Requests: minusEach(a.Requests, b.Requests), WatchEvents: minusEach(a.WatchEvents, b.WatchEvents),
		RequestSeconds: minusEach(a.RequestSeconds, b.RequestSeconds)}
}

// byLabels adds a counter family's series (a histogram's: their sums) up by
// the key key makes of their labels.
func byLabels(fam *dto.MetricFamily, key func(labels map[string]string) string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range fam.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if h := m.GetHistogram(); h != nil {
			out[key(labels)] += h.GetSampleSum()
			continue
		}
		out[key(labels)] += m.GetCounter().GetValue()
	}
	return out
}

// meanMilliseconds formats the mean time of each of the requests named, as
// "POST secrets 12.3 ms, ...".
func meanMilliseconds(api apiWrites, keys ...string) string {
	var parts []string
	for _, k := range keys {
		if n := api.Requests[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %.1f ms", k, 1000*api.RequestSeconds[k]/n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// minusEach is a - b per key, keeping only the keys that grew.
func minusEach(a, b map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range a {
		if d := v - b[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// largest formats the n largest counts of m, largest first.
func largest(m map[string]float64, n int) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range keys[:min(n, len(keys))] {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
