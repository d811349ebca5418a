package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
)

// The PushSecret phase: as many PushSecrets as ExternalSecrets, each pushing
// the two keys of its own source Secret to its namespace's Fake store.

// pushChanges is how many source Secrets are changed, one after another,
// to time how soon each change reaches the provider.
const pushChanges = 100

func pushSource(ns string, i int, password string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("push-src-%d", i)},
		Data: map[string][]byte{"user": []byte("app"), "password": []byte(password)}}
}

func pushSecret(ns string, i int, refresh time.Duration) *esv1alpha1.PushSecret {
	entry := func(key string) esv1alpha1.PushSecretData {
		return esv1alpha1.PushSecretData{Match: esv1alpha1.PushSecretMatch{SecretKey: key,
			RemoteRef: esv1alpha1.PushSecretRemoteRef{RemoteKey: fmt.Sprintf("pushed-%d-%s", i, key)}}}
	}
	return &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("push-%d", i)},
		Spec: esv1alpha1.PushSecretSpec{
			RefreshInterval: &metav1.Duration{Duration: refresh},
			SecretStoreRefs: []esv1alpha1.PushSecretStoreRef{{Name: "store", Kind: "SecretStore"}},
			Selector:        esv1alpha1.PushSecretSelector{Secret: &esv1alpha1.PushSecretSecret{Name: fmt.Sprintf("push-src-%d", i)}},
			Data:            []esv1alpha1.PushSecretData{entry("user"), entry("password")},
		}}
}

// pushTracker follows every PushSecret through a watch: whether it is Ready
// for its generation, and when its syncedResourceVersion (which names the
// source's version) last changed.
type pushTracker struct {
	changes
	ready  map[string]bool
	synced map[string]string
}

func startPushTracker(ctx context.Context, kubeconfig string) (*pushTracker, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	t := &pushTracker{changes: changes{changed: make(chan struct{})}, ready: map[string]bool{}, synced: map[string]string{}}
	ca, err := cache.New(rest.CopyConfig(rc), cache.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	inf, err := ca.GetInformer(ctx, &esv1alpha1.PushSecret{})
	if err != nil {
		return nil, err
	}
	update := func(obj any) {
		ps, ok := obj.(*esv1alpha1.PushSecret)
		if !ok {
			return
		}
		c := meta.FindStatusCondition(ps.Status.Conditions, esv1alpha1.ConditionReady)
		t.mu.Lock()
		defer t.mu.Unlock()
		key := ps.Namespace + "/" + ps.Name
		t.ready[key] = c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == ps.Generation
		t.synced[key] = ps.Status.SyncedResourceVersion
		t.notify()
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: update, UpdateFunc: func(_, o any) { update(o) }}); err != nil {
		return nil, err
	}
	go func() { _ = ca.Start(ctx) }()
	if !ca.WaitForCacheSync(ctx) {
		return nil, errors.New("PushSecret watch did not sync")
	}
	return t, nil
}

func (t *pushTracker) countReady() int {
	n := 0
	for _, r := range t.ready {
		if r {
			n++
		}
	}
	return n
}

// pushSecrets creates the PushSecrets and times them until all are Ready,
// counts what a quiet window and a window of refreshes cost, and times
// changes of source Secrets until they are pushed.
func (b *bench) pushSecrets(ctx context.Context, res *results) error {
	o := b.o
	n := o.Namespaces * o.PerNamespace
	p := &res.Push
	p.PushSecrets = n
	track, err := startPushTracker(ctx, b.kubeconfig)
	if err != nil {
		return err
	}
	progress("creating %d source Secrets and PushSecrets and waiting for all to be Ready", n)
	err = parallel(ctx, n, createWorkers, func(i int) error {
		return b.c.Create(ctx, pushSource(b.nss[i%o.Namespaces], i, "first"))
	})
	if err != nil {
		return fmt.Errorf("creating source Secrets: %w", err)
	}
	before, err := readPush(ctx, b)
	if err != nil {
		return err
	}
	cpuBefore, err := b.cpu()
	if err != nil {
		return err
	}
	start := time.Now()
	err = parallel(ctx, n, createWorkers, func(i int) error {
		return b.c.Create(ctx, pushSecret(b.nss[i%o.Namespaces], i, o.Refresh))
	})
	if err != nil {
		return fmt.Errorf("creating PushSecrets: %w", err)
	}
	if err := withTimeout(ctx, 5*time.Minute, func(ctx context.Context) error {
		return track.wait(ctx, fmt.Sprintf("%d PushSecrets Ready", n), func() bool { return track.countReady() >= n })
	}); err != nil {
		return b.withESO(err)
	}
	p.AllReadySeconds = time.Since(start).Seconds()
	p.PerSecond = float64(n) / p.AllReadySeconds
	cpuAfter, err := b.cpu()
	if err != nil {
		return err
	}
	p.ESOCPUSeconds = round2(cpuAfter - cpuBefore)
	m, err := b.mem(ctx, false)
	if err != nil {
		return err
	}
	p.RSSAfterSyncMiB = mib(m.RSS)
	after, err := readPush(ctx, b)
	if err != nil {
		return err
	}
	p.FirstSync = after.minus(before)

	// A quiet window: nothing changed and no refresh due.
	if err := b.waitQuiet(ctx, 30*time.Second); err != nil {
		return err
	}
	if p.Quiet, err = b.pushWindow(ctx, o.Window); err != nil {
		return err
	}

	// A window of refreshes with nothing changed: each checks the provider
	// and writes nothing.
	progress("setting refreshInterval %v on every PushSecret", o.WindowRefresh)
	err = parallel(ctx, n, createWorkers, func(i int) error {
		ps := &esv1alpha1.PushSecret{}
		if err := b.c.Get(ctx, client.ObjectKey{Namespace: b.nss[i%o.Namespaces], Name: fmt.Sprintf("push-%d", i)}, ps); err != nil {
			return err
		}
		patch := client.MergeFrom(ps.DeepCopy())
		ps.Spec.RefreshInterval = &metav1.Duration{Duration: o.WindowRefresh}
		return b.c.Patch(ctx, ps, patch)
	})
	if err != nil {
		return err
	}
	if err := withTimeout(ctx, 3*time.Minute, func(ctx context.Context) error {
		return track.wait(ctx, "PushSecrets Ready for their new generation", func() bool { return track.countReady() >= n })
	}); err != nil {
		return b.withESO(err)
	}
	if err := b.waitQuiet(ctx, 30*time.Second); err != nil {
		return err
	}
	if p.Refreshing, err = b.pushWindow(ctx, o.Window); err != nil {
		return err
	}
	p.ExpectedChecks = float64(2*n) * o.Window.Seconds() / o.WindowRefresh.Seconds()

	// Source changes, one after another, timed until the PushSecret records
	// the source's new version (it does so once every store holds it).
	progress("changing %d source Secrets one at a time", pushChanges)
	var took []float64
	for k := range min(pushChanges, n) {
		i := k * n / min(pushChanges, n)
		ns, key := b.nss[i%o.Namespaces], fmt.Sprintf("%s/push-%d", b.nss[i%o.Namespaces], i)
		track.mu.Lock()
		was := track.synced[key]
		track.mu.Unlock()
		start := time.Now()
		if err := b.c.Update(ctx, pushSource(ns, i, fmt.Sprintf("changed-%d", k))); err != nil {
			return err
		}
		if err := withTimeout(ctx, 30*time.Second, func(ctx context.Context) error {
			return track.wait(ctx, key+" to push its changed source", func() bool { return track.synced[key] != was })
		}); err != nil {
			return b.withESO(err)
		}
		took = append(took, float64(time.Since(start).Microseconds())/1000)
	}
	slices.Sort(took)
	p.ChangeP50Millis, p.ChangeP99Millis = quantile(took, 0.5), quantile(took, 0.99)
	return nil
}

// pushCounters is what a PushSecret phase costs: eso's provider calls to
// push, its status writes, and the API server's writes.
type pushCounters struct {
	PushCalls    float64 `json:"provider_push_calls"`
	StatusWrites float64 `json:"status_writes"`
	APIStatuses  float64 `json:"apiserver_pushsecret_status_writes"`
	APISecrets   float64 `json:"apiserver_secret_writes"`
}

func readPush(ctx context.Context, b *bench) (pushCounters, error) {
	fams, err := scrape(ctx, b.metricsURL)
	if err != nil {
		return pushCounters{}, err
	}
	raw, err := b.cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return pushCounters{}, err
	}
	api, err := parseMetrics(raw)
	if err != nil {
		return pushCounters{}, err
	}
	writes := func(resource, subresource string) float64 {
		total := 0.0
		for _, verb := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			total += sum(api, "apiserver_request_total", map[string]string{"verb": verb, "resource": resource, "subresource": subresource})
		}
		return total
	}
	return pushCounters{
		PushCalls:    sum(fams, "externalsecret_provider_api_calls_count", map[string]string{"call": "PushSecret"}),
		StatusWrites: sum(fams, "eso_status_writes_total", map[string]string{"kind": "PushSecret"}),
		APIStatuses:  writes("pushsecrets", "status"),
		APISecrets:   writes("secrets", ""),
	}, nil
}

func (a pushCounters) minus(b pushCounters) pushCounters {
	return pushCounters{PushCalls: a.PushCalls - b.PushCalls, StatusWrites: a.StatusWrites - b.StatusWrites,
		APIStatuses: a.APIStatuses - b.APIStatuses, APISecrets: a.APISecrets - b.APISecrets}
}

// pushWindow counts what a window of length d costs.
func (b *bench) pushWindow(ctx context.Context, d time.Duration) (pushCounters, error) {
	before, err := readPush(ctx, b)
	if err != nil {
		return pushCounters{}, err
	}
	if err := sleep(ctx, d); err != nil {
		return pushCounters{}, err
	}
	after, err := readPush(ctx, b)
	if err != nil {
		return pushCounters{}, err
	}
	return after.minus(before), nil
}

// quantile of sorted values (nearest rank).
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
