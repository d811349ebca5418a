package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/manager"
)

// rawResult is the raw client's first sync: the writes eso makes for a
// first sync, made by a plain client-go program with eso's concurrency and
// client limits, on a control plane like eso's.
type rawResult struct {
	// Seconds is until the benchmark's watch saw every ExternalSecret
	// Ready, as eso is timed; WritesSeconds until the last write returned.
	Seconds       float64 `json:"seconds"`
	WritesSeconds float64 `json:"writes_seconds"`
	PerSecond     float64 `json:"per_second"`
	// ControlPlaneCPUSeconds is what the API server and etcd used meanwhile.
	ControlPlaneCPUSeconds float64 `json:"control_plane_cpu_seconds"`
	// BenchCPUSeconds is the benchmark process's: the raw client's writes
	// and the watch that times them.
	BenchCPUSeconds float64 `json:"bench_cpu_seconds"`
	// API is what the API server was asked meanwhile (its metrics, read by
	// the benchmark's own client too).
	API apiWrites `json:"api"`
	// Progress is when each of quarterPoints were Ready.
	Progress []float64 `json:"ready_progress_seconds"`
	// Ratio is eso's all Ready time over Seconds, set once eso ran.
	Ratio float64 `json:"eso_over_raw"`
}

var esGVR = esv1.GroupVersion.WithResource("externalsecrets")

// rawOnFreshControlPlane runs rawFirstSync on a control plane of its own,
// built and started as eso's is, and stops it after: each side syncs on a
// control plane that has seen nothing else. On one shared control plane
// the side that ran second paid for the first's history (its deleted
// objects still in the API server's watch cache and in etcd's revisions
// until compaction): a second raw sync there took 38.4 s and 67 s of
// control-plane CPU against the first's 32.3 s and 56 s.
func rawOnFreshControlPlane(ctx context.Context, o options, work, cpBin string) (*rawResult, error) {
	cp, kubeconfig, err := startControlPlane(ctx, work, cpBin, "raw", "the raw client")
	if err != nil {
		return nil, err
	}
	defer cp.stop(30 * time.Second)
	return rawFirstSync(ctx, o, kubeconfig)
}

// rawFirstSync measures the floor under eso's first sync: for as many
// ExternalSecrets as eso syncs (created beforehand, untimed), -concurrent
// goroutines create each target Secret as eso writes it (same labels,
// annotations, owner reference, keys and values) and patch each status as
// eso does after a sync. Only those writes are timed.
func rawFirstSync(ctx context.Context, o options, kubeconfig string) (*rawResult, error) {
	base, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	// Setting up and cleaning up: as fast as the benchmark's own client.
	setup := rest.CopyConfig(base)
	setup.QPS, setup.Burst = 5000, 10000
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(setup, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	setupCS, err := kubernetes.NewForConfig(setup)
	if err != nil {
		return nil, err
	}
	// The timed writes: eso's client settings (user agent aside), with
	// protobuf for Secrets as controller-runtime uses for built-in kinds.
	rc := manager.WithClientLimits(base, config.Config{ClientQPS: o.ClientQPS, ClientBurst: o.ClientBurst}, "eso-bench-raw")
	secretsRC := rest.CopyConfig(rc)
	secretsRC.ContentType = runtime.ContentTypeProtobuf
	secretsRC.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	cs, err := kubernetes.NewForConfig(secretsRC)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}

	n := o.Namespaces * o.PerNamespace
	nss := make([]string, o.Namespaces)
	for i := range nss {
		nss[i] = fmt.Sprintf("raw-%d", i)
	}
	progress("raw client: creating %d ExternalSecrets in %d namespaces of its own", n, o.Namespaces)
	err = parallel(ctx, o.Namespaces, createWorkers, func(i int) error { return createNamespace(ctx, c, nss[i]) })
	if err != nil {
		return nil, fmt.Errorf("raw client: creating namespaces: %w", err)
	}
	ess := make([]*esv1.ExternalSecret, n)
	err = parallel(ctx, n, createWorkers, func(i int) error {
		es := externalSecret(nss[i%o.Namespaces], fmt.Sprintf("es-%d", i/o.Namespaces), o.Refresh)
		ess[i] = es
		return c.Create(ctx, es) // fills in the UID the owner reference needs
	})
	if err != nil {
		return nil, fmt.Errorf("raw client: creating ExternalSecrets: %w", err)
	}

	// Timed as eso is: until a watch of every ExternalSecret (the one
	// that times eso) sees them all Ready, so that watch's cost on the
	// control plane, and its lag, weigh on both sides.
	trackCtx, stopTracking := context.WithCancel(ctx)
	defer stopTracking()
	track, err := startTracker(trackCtx, setup, scheme)
	if err != nil {
		return nil, err
	}

	progress("raw client: creating %d Secrets and patching %d statuses, %d at a time", n, n, o.Concurrent)
	apiBefore, err := readAPIWrites(ctx, setupCS)
	if err != nil {
		return nil, err
	}
	cpBefore, err := controlPlaneCPU()
	if err != nil {
		return nil, err
	}
	benchBefore, err := cpuSeconds(os.Getpid())
	if err != nil {
		return nil, err
	}
	start := time.Now()
	apiProfiled := apiServerProfile(ctx, o, setupCS, "raw-sync-apiserver-cpu.pb.gz", o.SyncProfile)
	err = parallel(ctx, n, o.Concurrent, func(i int) error {
		es := ess[i]
		if _, err := cs.CoreV1().Secrets(es.Namespace).Create(ctx, rawTarget(es), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating Secret: %w", err)
		}
		patch, err := rawStatusPatch(es, time.Now())
		if err != nil {
			return err
		}
		if _, err := dyn.Resource(esGVR).Namespace(es.Namespace).Patch(ctx, es.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			return fmt.Errorf("patching status: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("raw client: %w", err)
	}
	written := time.Since(start).Seconds()
	if err := withTimeout(ctx, time.Minute, func(ctx context.Context) error { return track.waitAllReady(ctx, n, 0) }); err != nil {
		return nil, fmt.Errorf("raw client: %w", err)
	}
	res := &rawResult{Seconds: time.Since(start).Seconds(), WritesSeconds: round2(written),
		Progress: track.quarters(start, n)}
	stopTracking()
	res.PerSecond = float64(n) / res.Seconds
	cpAfter, err := controlPlaneCPU()
	if err != nil {
		return nil, err
	}
	res.ControlPlaneCPUSeconds = round2(cpAfter - cpBefore)
	benchAfter, err := cpuSeconds(os.Getpid())
	if err != nil {
		return nil, err
	}
	res.BenchCPUSeconds = round2(benchAfter - benchBefore)
	apiAfter, err := readAPIWrites(ctx, setupCS)
	if err != nil {
		return nil, err
	}
	res.API = apiAfter.minus(apiBefore)
	if err := apiProfiled(); err != nil { // after the counts: it may outlast the sync
		return nil, err
	}

	return res, nil
}

// rawTarget is the Secret eso writes for es on its first sync: the Fake
// provider's two values, eso's managed label, managed-by and data-hash
// annotations, and es as its controller.
func rawTarget(es *esv1.ExternalSecret) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: es.Namespace, Name: es.Name,
			Labels: map[string]string{esv1.LabelManaged: esv1.LabelManagedValue},
			Annotations: map[string]string{
				esv1.AnnotationManagedBy: es.Name,
				esv1.AnnotationDataHash:  "0123456789abcdef0123456789abcdef", // as long as eso's
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: esv1.GroupVersion.String(), Kind: "ExternalSecret", Name: es.Name, UID: es.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"user": []byte("app"), "password": []byte("not-a-real-password")},
	}
}

// rawStatusPatch is the merge patch of the status eso writes after a first
// sync: the Ready and Synced conditions, refresh time, synced version and
// binding. Both conditions: a status of one condition fewer costs the API
// server less to patch, validate and track in managedFields.
func rawStatusPatch(es *esv1.ExternalSecret, now time.Time) ([]byte, error) {
	st := esv1.ExternalSecretStatus{
		RefreshTime:           metav1.NewTime(now),
		SyncedResourceVersion: fmt.Sprintf("%d-0123456789abcdef", es.Generation),
		Binding:               esv1.SecretBinding{Name: es.Name},
		ObservedGeneration:    es.Generation,
	}
	for _, condition := range []string{esv1.ConditionReady, esv1.ConditionSynced} {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: condition, Status: metav1.ConditionTrue,
			Reason: esv1.ReasonSecretSynced, Message: "Secret " + es.Name + " is in sync with the provider", ObservedGeneration: es.Generation})
	}
	return json.Marshal(map[string]any{"status": st})
}
