package shardcache

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func namesOf(t *testing.T, list *corev1.ConfigMapList) []string {
	t.Helper()
	var names []string
	for _, cm := range list.Items {
		names = append(names, cm.Namespace+"/"+cm.Name)
	}
	slices.Sort(names)
	return names
}

func listConfigMaps(t *testing.T, c *Cache, opts ...client.ListOption) []string {
	t.Helper()
	list := &corev1.ConfigMapList{}
	if err := c.List(context.Background(), list, opts...); err != nil {
		t.Fatalf("List: %v", err)
	}
	return namesOf(t, list)
}

func handler(t *testing.T, c *Cache, obj client.Object) (*recorder, toolscache.ResourceEventHandlerRegistration) {
	t.Helper()
	inf, err := c.GetInformer(context.Background(), obj)
	if err != nil {
		t.Fatalf("GetInformer: %v", err)
	}
	rec := &recorder{}
	reg, err := inf.AddEventHandler(rec)
	if err != nil {
		t.Fatalf("AddEventHandler: %v", err)
	}
	return rec, reg
}

func TestHandlersSeeAddedNamespaceAsCreates(t *testing.T) {
	a, b := namespaceFor(t, "add-a"), namespaceFor(t, "add-b")
	configMap(t, a, "one", nil, nil)
	configMap(t, b, "two", nil, nil)
	c := started(t, cache.Options{}, configMapGVK)
	rec, reg := handler(t, c, &corev1.ConfigMap{})

	addNamespace(t, c, a)
	// AddNamespace returns once the handlers were given the namespace.
	if !rec.saw(event{"add", a, "one"}) {
		t.Fatalf("no create for %s/one after AddNamespace: %v", a, rec.events)
	}
	if !reg.HasSynced() {
		t.Error("registration not synced after AddNamespace")
	}
	if n := rec.in(b); n != 0 {
		t.Errorf("%d events from namespace %s, which is not owned", n, b)
	}
	configMap(t, a, "three", nil, nil)
	eventually(t, "a create for a new object", func() bool { return rec.saw(event{"add", a, "three"}) })

	addNamespace(t, c, b)
	if !rec.saw(event{"add", b, "two"}) {
		t.Errorf("no create for %s/two after AddNamespace", b)
	}
	if got, want := c.Namespaces(), sorted(a, b); !slices.Equal(got, want) {
		t.Errorf("Namespaces() = %v, want %v", got, want)
	}
}

func sorted(s ...string) []string { slices.Sort(s); return s }

func TestHandlerAddedAfterNamespacesSeesTheirObjects(t *testing.T) {
	a := namespaceFor(t, "late")
	configMap(t, a, "one", nil, nil)
	c := started(t, cache.Options{}, configMapGVK)
	addNamespace(t, c, a)

	rec, reg := handler(t, c, &corev1.ConfigMap{})
	eventually(t, "the existing object as a create", func() bool { return rec.saw(event{"add", a, "one"}) })
	eventually(t, "the registration to sync", reg.HasSynced)

	// Removing the handler stops its events, in this namespace and the next.
	inf, _ := c.GetInformer(context.Background(), &corev1.ConfigMap{})
	if err := inf.RemoveEventHandler(reg); err != nil {
		t.Fatalf("RemoveEventHandler: %v", err)
	}
	if err := inf.RemoveEventHandler(reg); err != nil {
		t.Errorf("second RemoveEventHandler: %v", err)
	}
	b := namespaceFor(t, "late-b")
	configMap(t, b, "two", nil, nil)
	addNamespace(t, c, b)
	configMap(t, a, "three", nil, nil)
	time.Sleep(300 * time.Millisecond)
	if n := rec.in(b) + rec.count(func(e event) bool { return e.name == "three" }); n != 0 {
		t.Errorf("%d events after the handler was removed", n)
	}
}

func TestRemoveNamespaceDeliversNoDeletes(t *testing.T) {
	a := namespaceFor(t, "rm")
	configMap(t, a, "one", nil, nil)
	c := started(t, cache.Options{}, configMapGVK)
	rec, _ := handler(t, c, &corev1.ConfigMap{})
	addNamespace(t, c, a)

	c.RemoveNamespace(a)
	c.RemoveNamespace(a) // idempotent
	if len(c.Namespaces()) != 0 {
		t.Fatalf("Namespaces() = %v after removal", c.Namespaces())
	}
	configMap(t, a, "two", nil, nil)
	if err := direct.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: a, Name: "one"}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := rec.ops("delete"); n != 0 {
		t.Errorf("%d delete events after RemoveNamespace: %v", n, rec.events)
	}
	if rec.saw(event{"add", a, "two"}) {
		t.Error("a create from a namespace no longer owned")
	}
	if got := listConfigMaps(t, c); len(got) != 0 {
		t.Errorf("List after removal = %v, want nothing", got)
	}
}

func TestNotOwnedNamespaceIsNotNotFound(t *testing.T) {
	a, other := namespaceFor(t, "own"), namespaceFor(t, "other")
	configMap(t, other, "theirs", nil, nil)
	c := started(t, cache.Options{}, configMapGVK)
	addNamespace(t, c, a)
	ctx := context.Background()

	tests := []struct {
		name string
		read func() error
	}{
		{"get", func() error {
			return c.Get(ctx, client.ObjectKey{Namespace: other, Name: "theirs"}, &corev1.ConfigMap{})
		}},
		{"get metadata", func() error {
			m := &metav1.PartialObjectMetadata{}
			m.SetGroupVersionKind(configMapGVK)
			return c.Get(ctx, client.ObjectKey{Namespace: other, Name: "theirs"}, m)
		}},
		{"list in namespace", func() error { return c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(other)) }},
		{"get without namespace", func() error { return c.Get(ctx, client.ObjectKey{Name: "theirs"}, &corev1.ConfigMap{}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.read()
			if !IsNotOwned(err) {
				t.Fatalf("err = %v, want a not-owned error", err)
			}
			if apierrors.IsNotFound(err) {
				t.Errorf("a not-owned error reads as NotFound: %v", err)
			}
		})
	}
	// In an owned namespace a missing object is NotFound, as usual.
	err := c.Get(ctx, client.ObjectKey{Namespace: a, Name: "missing"}, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) || IsNotOwned(err) {
		t.Errorf("missing object in owned namespace: err = %v, want NotFound", err)
	}
}

func TestListAcrossNamespacesIsTheOwnedUnion(t *testing.T) {
	a, b, other := namespaceFor(t, "u-a"), namespaceFor(t, "u-b"), namespaceFor(t, "u-other")
	for _, ns := range []string{a, b, other} {
		configMap(t, ns, "blue", map[string]string{"colour": "blue"}, nil)
		configMap(t, ns, "red", map[string]string{"colour": "red"}, nil)
	}
	c := started(t, cache.Options{}, configMapGVK)
	addNamespace(t, c, a)
	addNamespace(t, c, b)

	tests := []struct {
		name string
		opts []client.ListOption
		want []string
	}{
		{"all", nil, sorted(a+"/blue", a+"/red", b+"/blue", b+"/red")},
		{"label selector", []client.ListOption{client.MatchingLabels{"colour": "blue"}}, sorted(a+"/blue", b+"/blue")},
		{"one namespace", []client.ListOption{client.InNamespace(b)}, sorted(b+"/blue", b+"/red")},
		{"one namespace, label selector", []client.ListOption{client.InNamespace(a), client.MatchingLabels{"colour": "red"}}, []string{a + "/red"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := listConfigMaps(t, c, tt.opts...); !slices.Equal(got, tt.want) {
				t.Errorf("List = %v, want %v", got, tt.want)
			}
		})
	}
	if got := listConfigMaps(t, c, client.Limit(3)); len(got) != 3 {
		t.Errorf("List with limit 3 gave %d items", len(got))
	}
}

func TestFieldIndexAcrossAddAndRemove(t *testing.T) {
	a, b, d := namespaceFor(t, "ix-a"), namespaceFor(t, "ix-b"), namespaceFor(t, "ix-d")
	for _, ns := range []string{a, b, d} {
		configMap(t, ns, "yes", nil, map[string]string{"key": "wanted"})
		configMap(t, ns, "no", nil, map[string]string{"key": "other"})
	}
	byKey := func(o client.Object) []string { return []string{o.(*corev1.ConfigMap).Data["key"]} }
	byName := func(o client.Object) []string { return []string{o.GetName()} }

	c, err := New(restConfig, Options{Sharded: Kinds(configMapGVK)})
	if err != nil {
		t.Fatal(err)
	}
	// As a manager does: indexes first, then Start, then namespaces.
	if err := c.IndexField(context.Background(), &corev1.ConfigMap{}, "key", byKey); err != nil {
		t.Fatalf("IndexField: %v", err)
	}
	if err := c.IndexField(context.Background(), &corev1.ConfigMap{}, "key", byKey); err == nil {
		t.Error("a second index on the same field was accepted")
	}
	run(t, c)

	addNamespace(t, c, a)
	wanted := client.MatchingFields{"key": "wanted"}
	if got, want := listConfigMaps(t, c, wanted), []string{a + "/yes"}; !slices.Equal(got, want) {
		t.Errorf("indexed List = %v, want %v", got, want)
	}
	addNamespace(t, c, b)
	if got, want := listConfigMaps(t, c, wanted), sorted(a+"/yes", b+"/yes"); !slices.Equal(got, want) {
		t.Errorf("indexed List after adding %s = %v, want %v", b, got, want)
	}
	if got, want := listConfigMaps(t, c, wanted, client.InNamespace(b)), []string{b + "/yes"}; !slices.Equal(got, want) {
		t.Errorf("indexed List in %s = %v, want %v", b, got, want)
	}
	c.RemoveNamespace(a)
	if got, want := listConfigMaps(t, c, wanted), []string{b + "/yes"}; !slices.Equal(got, want) {
		t.Errorf("indexed List after removing %s = %v, want %v", a, got, want)
	}

	// An index added while namespaces are running reaches them and the next.
	if err := c.IndexField(context.Background(), &corev1.ConfigMap{}, "name", byName); err != nil {
		t.Fatalf("IndexField after start: %v", err)
	}
	addNamespace(t, c, d)
	if got, want := listConfigMaps(t, c, client.MatchingFields{"name": "no"}), sorted(b+"/no", d+"/no"); !slices.Equal(got, want) {
		t.Errorf("late index List = %v, want %v", got, want)
	}
}

func TestUnshardedKindsAreClusterWide(t *testing.T) {
	a, other := namespaceFor(t, "cw"), namespaceFor(t, "cw-other")
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "s"}}
	if err := direct.Create(context.Background(), sec); err != nil {
		t.Fatal(err)
	}
	// Namespaces are cluster-scoped: sharding them is ignored.
	c := started(t, cache.Options{}, configMapGVK, corev1.SchemeGroupVersion.WithKind("Namespace"))
	addNamespace(t, c, a)
	ctx := context.Background()

	if err := c.Get(ctx, client.ObjectKeyFromObject(sec), &corev1.Secret{}); err != nil {
		t.Errorf("Get of an unsharded kind in a namespace not owned: %v", err)
	}
	secrets := &corev1.SecretList{}
	if err := c.List(ctx, secrets); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(secrets.Items, func(s corev1.Secret) bool { return s.Namespace == other }) {
		t.Error("cluster-wide List of an unsharded kind misses a namespace not owned")
	}
	if err := c.Get(ctx, client.ObjectKey{Name: other}, &corev1.Namespace{}); err != nil {
		t.Errorf("Get of a cluster-scoped kind: %v", err)
	}
	rec, _ := handler(t, c, &corev1.Secret{})
	eventually(t, "the unsharded handler to see a namespace not owned", func() bool { return rec.in(other) > 0 })
}

// TestByObjectReachesNamespaceCaches: a sharded metadata-only kind keeps its
// label selector and transform in every namespace cache.
func TestByObjectReachesNamespaceCaches(t *testing.T) {
	a := namespaceFor(t, "by")
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: a, Name: "managed", Labels: map[string]string{"managed": "yes"}, Annotations: map[string]string{"big": "x"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: a, Name: "foreign"}},
	} {
		if err := direct.Create(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(secretGVK)
	opts := cache.Options{ByObject: map[client.Object]cache.ByObject{meta: {
		Label: labels.SelectorFromSet(labels.Set{"managed": "yes"}),
		Transform: func(o any) (any, error) {
			o.(client.Object).SetAnnotations(nil)
			return o, nil
		},
	}}}
	c := started(t, opts, secretGVK)
	addNamespace(t, c, a)

	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(secretGVK.GroupVersion().WithKind("SecretList"))
	if err := c.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "managed" {
		t.Fatalf("List = %v, want only the labelled Secret", list.Items)
	}
	if list.Items[0].Annotations != nil {
		t.Error("the transform did not run in the namespace cache")
	}

	if _, err := New(restConfig, Options{Sharded: Kinds(secretGVK), Options: cache.Options{
		ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Namespaces: map[string]cache.Config{a: {}}}},
	}}); err == nil {
		t.Error("New accepted ByObject.Namespaces on a sharded kind")
	}
}

func TestRemoveNamespaceStopsItsInformers(t *testing.T) {
	a := namespaceFor(t, "leak")
	configMap(t, a, "one", nil, nil)
	c := started(t, cache.Options{}, configMapGVK)
	handler(t, c, &corev1.ConfigMap{})
	if err := c.IndexField(context.Background(), &corev1.ConfigMap{}, "name", func(o client.Object) []string { return []string{o.GetName()} }); err != nil {
		t.Fatal(err)
	}
	// One round first, so that lazily started shared machinery (HTTP/2
	// connections, the mapper) is in the baseline.
	addNamespace(t, c, a)
	c.RemoveNamespace(a)
	time.Sleep(200 * time.Millisecond)
	baseline := runtime.NumGoroutine()

	for range 5 {
		addNamespace(t, c, a)
		c.mu.RLock()
		n := c.namespaces[a]
		c.mu.RUnlock()
		c.RemoveNamespace(a)
		n.runs.mu.Lock()
		running := n.runs.n
		n.runs.mu.Unlock()
		if running != 0 {
			t.Fatalf("%d informers still running after RemoveNamespace", running)
		}
		if n.ctx.Err() == nil {
			t.Fatal("the namespace's context is still live after RemoveNamespace")
		}
	}
	eventually(t, fmt.Sprintf("goroutines back to %d", baseline), func() bool { return runtime.NumGoroutine() <= baseline })
}

func TestConcurrentAddAndRemove(t *testing.T) {
	var nss []string
	for i := range 4 {
		ns := namespaceFor(t, fmt.Sprintf("conc%d", i))
		configMap(t, ns, "cm", nil, map[string]string{"key": ns})
		nss = append(nss, ns)
	}
	c := started(t, cache.Options{}, configMapGVK)
	if err := c.IndexField(context.Background(), &corev1.ConfigMap{}, "key", func(o client.Object) []string {
		return []string{o.(*corev1.ConfigMap).Data["key"]}
	}); err != nil {
		t.Fatal(err)
	}
	rec, _ := handler(t, c, &corev1.ConfigMap{})

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() { // membership churn
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for ctx.Err() == nil {
				ns := nss[r.IntN(len(nss))]
				if r.IntN(2) == 0 {
					err := c.AddNamespace(ctx, ns)
					if err != nil && ctx.Err() == nil && !IsNotOwned(err) {
						t.Errorf("AddNamespace: %v", err)
					}
				} else {
					c.RemoveNamespace(ns)
				}
			}
		})
		wg.Go(func() { // readers and handler churn
			r := rand.New(rand.NewPCG(uint64(w), 2))
			for ctx.Err() == nil {
				ns := nss[r.IntN(len(nss))]
				err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm"}, &corev1.ConfigMap{})
				if err != nil && !IsNotOwned(err) && ctx.Err() == nil {
					t.Errorf("Get: %v", err)
				}
				list := &corev1.ConfigMapList{}
				if err := c.List(ctx, list, client.MatchingFields{"key": ns}); err != nil && ctx.Err() == nil {
					t.Errorf("List: %v", err)
				}
				inf, err := c.GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
				if err != nil {
					t.Errorf("GetInformer: %v", err)
					continue
				}
				reg, err := inf.AddEventHandler(&recorder{})
				if err != nil {
					t.Errorf("AddEventHandler: %v", err)
					continue
				}
				_ = reg.HasSynced()
				_ = inf.HasSynced()
				if err := inf.RemoveEventHandler(reg); err != nil {
					t.Errorf("RemoveEventHandler: %v", err)
				}
				_ = c.Namespaces()
			}
		})
	}
	wg.Wait()

	// Whatever the churn left, the cache still works.
	for _, ns := range nss {
		addNamespace(t, c, ns)
	}
	if got := listConfigMaps(t, c); len(got) != len(nss) {
		t.Errorf("List after churn = %v, want %d items", got, len(nss))
	}
	for _, ns := range nss {
		if got := listConfigMaps(t, c, client.MatchingFields{"key": ns}); len(got) != 1 {
			t.Errorf("indexed List for %s after churn = %v", ns, got)
		}
	}
	if rec.ops("delete") != 0 {
		t.Errorf("delete events during churn: %d", rec.ops("delete"))
	}
	if !c.WaitForCacheSync(context.Background()) {
		t.Error("WaitForCacheSync failed")
	}
}

func TestKinds(t *testing.T) {
	sharded := Kinds(configMapGVK, secretGVK)
	tests := []struct {
		gvk  schema.GroupVersionKind
		want bool
	}{
		{configMapGVK, true},
		{secretGVK, true},
		{corev1.SchemeGroupVersion.WithKind("Pod"), false},
		{schema.GroupVersionKind{Group: "other", Version: "v1", Kind: "ConfigMap"}, false},
	}
	for _, tt := range tests {
		for _, metadataOnly := range []bool{false, true} {
			if got := sharded(tt.gvk, metadataOnly); got != tt.want {
				t.Errorf("Kinds(...)(%v, %v) = %v, want %v", tt.gvk, metadataOnly, got, tt.want)
			}
		}
	}
}

// TestAsManagerCache runs a controller on a manager whose cache this is:
// its watch follows the namespaces as they come and go, and an index
// registered through the manager reaches them.
func TestAsManagerCache(t *testing.T) {
	a, b := namespaceFor(t, "mgr-a"), namespaceFor(t, "mgr-b")
	configMap(t, a, "one", nil, map[string]string{"key": "k"})
	configMap(t, b, "two", nil, map[string]string{"key": "k"})

	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		NewCache:               NewCacheFunc(Kinds(configMapGVK)),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.ConfigMap{}, "key", func(o client.Object) []string {
		return []string{o.(*corev1.ConfigMap).Data["key"]}
	}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	reconciled := map[string]bool{}
	err = ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("shardcache-test").
		Complete(reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			reconciled[req.String()] = true
			return reconcile.Result{}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	seen := func(ns, name string) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			return reconciled[ns+"/"+name]
		}
	}

	c := mgr.GetCache().(*Cache)
	addNamespace(t, c, a)
	eventually(t, "a reconcile of "+a+"/one", seen(a, "one"))
	addNamespace(t, c, b)
	eventually(t, "a reconcile of "+b+"/two", seen(b, "two"))

	list := &corev1.ConfigMapList{}
	if err := mgr.GetClient().List(ctx, list, client.MatchingFields{"key": "k"}); err != nil {
		t.Fatalf("indexed List through the manager's client: %v", err)
	}
	if got, want := namesOf(t, list), sorted(a+"/one", b+"/two"); !slices.Equal(got, want) {
		t.Errorf("indexed List = %v, want %v", got, want)
	}
	c.RemoveNamespace(a)
	configMap(t, a, "three", nil, nil)
	configMap(t, b, "four", nil, nil)
	eventually(t, "a reconcile of "+b+"/four", seen(b, "four"))
	if seen(a, "three")() {
		t.Error("reconciled an object of a namespace no longer owned")
	}
	err = mgr.GetClient().Get(ctx, client.ObjectKey{Namespace: a, Name: "one"}, &corev1.ConfigMap{})
	if !IsNotOwned(err) {
		t.Errorf("Get through the manager's client in a removed namespace: err = %v, want not owned", err)
	}
}

func TestAddNamespaceRefuses(t *testing.T) {
	bounded, err := New(restConfig, Options{Sharded: Kinds(configMapGVK), Options: cache.Options{
		DefaultNamespaces: map[string]cache.Config{"allowed": {}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	tests := []struct {
		name string
		ns   string
	}{
		{"empty name", ""},
		{"outside DefaultNamespaces", "elsewhere"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := bounded.AddNamespace(ctx, tt.ns); err == nil {
				t.Error("accepted")
			}
			if got := bounded.Namespaces(); len(got) != 0 {
				t.Errorf("Namespaces() = %v", got)
			}
		})
	}
	// Before Start a namespace is taken, and AddNamespace waits for Start.
	if err := bounded.AddNamespace(ctx, "allowed"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("AddNamespace before Start: err = %v, want the context's deadline", err)
	}
	if got := bounded.Namespaces(); !slices.Equal(got, []string{"allowed"}) {
		t.Errorf("Namespaces() = %v", got)
	}
}

// TestFormsAreShardedApart: a kind sharded in its full form may keep a
// cluster-wide metadata cache, as eso keeps one of ClusterExternalSecret
// children while their ExternalSecrets are sharded.
func TestFormsAreShardedApart(t *testing.T) {
	a, other := namespaceFor(t, "forms"), namespaceFor(t, "forms-other")
	configMap(t, other, "far", nil, nil)
	c, err := New(restConfig, Options{Sharded: func(gvk schema.GroupVersionKind, metadataOnly bool) bool {
		return gvk == configMapGVK && !metadataOnly
	}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	addNamespace(t, c, a)

	ctx := context.Background()
	key := client.ObjectKey{Namespace: other, Name: "far"}
	if err := c.Get(ctx, key, &corev1.ConfigMap{}); !IsNotOwned(err) {
		t.Errorf("typed Get in a namespace not owned: %v, want ErrNotOwned", err)
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(configMapGVK)
	eventually(t, "the metadata form to read a namespace not owned", func() bool { return c.Get(ctx, key, m) == nil })
}

// TestSetNamespaces: the owned namespaces become exactly the ones given,
// and it says which have synced, waiting only for those it adds.
func TestSetNamespaces(t *testing.T) {
	a, b, d := namespaceFor(t, "set-a"), namespaceFor(t, "set-b"), namespaceFor(t, "set-d")
	for _, ns := range []string{a, b, d} {
		configMap(t, ns, "cm", nil, nil)
	}
	c := started(t, cache.Options{}, configMapGVK)
	ctx := context.Background()
	// With its context ended it waits for nothing: the namespaces are
	// owned, syncing, and reported once they have synced.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	c.SetNamespaces(cancelled, []string{a, b})
	if got := c.Namespaces(); !slices.Equal(got, sorted(a, b)) {
		t.Errorf("after SetNamespaces(%s, %s) with its context ended: owns %v", a, b, got)
	}
	// NamespaceSynced says when they have, and Synced which (not d: it is
	// not owned).
	deadline := time.After(30 * time.Second)
	for {
		select {
		case <-c.NamespaceSynced():
		case <-deadline:
			t.Fatalf("NamespaceSynced never said %s and %s synced", a, b)
		}
		if synced := c.Synced([]string{a, b, d}); len(synced) == 2 && synced[a] && synced[b] {
			break
		}
	}
	if got := listConfigMaps(t, c); !slices.Equal(got, sorted(a+"/cm", b+"/cm")) {
		t.Errorf("after setting %s and %s: %v", a, b, got)
	}
	if synced := c.SetNamespaces(ctx, []string{d, b}); len(synced) != 2 || !synced[d] || !synced[b] {
		t.Errorf("SetNamespaces(%s, %s) synced %v", d, b, synced)
	}
	if got, want := c.Namespaces(), sorted(b, d); !slices.Equal(got, want) {
		t.Errorf("Namespaces() = %v, want %v", got, want)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: a, Name: "cm"}, &corev1.ConfigMap{}); !IsNotOwned(err) {
		t.Errorf("Get in the namespace dropped: %v, want ErrNotOwned", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: d, Name: "cm"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("Get in the namespace added: %v", err)
	}
}

// listCounter records the most Lists of ConfigMaps or Secrets in flight
// at once through the transports it wraps, which hold each such List for
// a while.
type listCounter struct {
	mu   sync.Mutex
	now  int
	peak int
	all  int
}

func (l *listCounter) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) { return l.roundTrip(next, req) })
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (l *listCounter) roundTrip(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	isList := req.Method == http.MethodGet && req.URL.Query().Get("watch") == "" &&
		(strings.HasSuffix(req.URL.Path, "/configmaps") || strings.HasSuffix(req.URL.Path, "/secrets"))
	if !isList {
		return next.RoundTrip(req)
	}
	l.mu.Lock()
	l.now++
	l.all++
	l.peak = max(l.peak, l.now)
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.now--
		l.mu.Unlock()
	}()
	time.Sleep(50 * time.Millisecond) // long enough for starts to overlap
	return next.RoundTrip(req)
}

func (l *listCounter) counts() (peak, all int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.peak, l.all
}

// Namespaces added together, and a kind asked for while they run, start
// their informers a few at a time: never more first Lists in flight than
// ConcurrentStarts.
func TestStartsAreBounded(t *testing.T) {
	const concurrent = 3
	var namespaces []string
	for range 12 {
		ns := namespaceFor(t, "starts")
		configMap(t, ns, "cm", nil, nil)
		namespaces = append(namespaces, ns)
	}
	lists := &listCounter{}
	cfg := rest.CopyConfig(restConfig)
	cfg.WrapTransport = lists.wrap
	c, err := New(cfg, Options{Sharded: Kinds(configMapGVK, secretGVK), ConcurrentStarts: concurrent})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.GetInformer(ctx, &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	if synced := c.SetNamespaces(ctx, namespaces); len(synced) != len(namespaces) {
		t.Fatalf("%d of %d namespaces synced", len(synced), len(namespaces))
	}
	if peak, all := lists.counts(); all < len(namespaces) || peak > concurrent {
		t.Errorf("adding %d namespaces: %d Lists, at most %d at once; want at most %d at once", len(namespaces), all, peak, concurrent)
	}

	secrets := &metav1.PartialObjectMetadata{}
	secrets.SetGroupVersionKind(secretGVK)
	if _, err := c.GetInformer(ctx, secrets); err != nil {
		t.Fatal(err)
	}
	for _, ns := range namespaces {
		if err := c.List(ctx, &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "SecretList"}}, client.InNamespace(ns)); err != nil {
			t.Fatalf("listing Secrets in %s: %v", ns, err)
		}
	}
	if peak, all := lists.counts(); all < 2*len(namespaces) || peak > concurrent {
		t.Errorf("a kind joining %d namespaces: %d Lists in all, at most %d at once; want at most %d at once", len(namespaces), all, peak, concurrent)
	}
}
