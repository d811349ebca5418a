package shardcache

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// The tests shard core kinds (ConfigMaps, Secret metadata), which need no
// CRDs, against a real API server.
var (
	restConfig *rest.Config
	direct     client.Client // no cache

	configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	secretGVK    = corev1.SchemeGroupVersion.WithKind("Secret")
)

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: it must name the directory holding kube-apiserver and etcd")
		os.Exit(1)
	}
	logf.SetLogger(logr.Discard())
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		os.Exit(1)
	}
	restConfig = cfg
	if direct, err = client.New(cfg, client.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}

// started builds a Cache sharding the given kinds and runs it until the
// test ends.
func started(t *testing.T, opts cache.Options, sharded ...schema.GroupVersionKind) *Cache {
	t.Helper()
	c, err := New(restConfig, Options{Options: opts, Sharded: Kinds(sharded...)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	run(t, c)
	return c
}

// run starts c and stops it when the test ends.
func run(t *testing.T, c *Cache) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
}

func namespaceFor(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := direct.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return ns.Name
}

func configMap(t *testing.T, ns, name string, labels, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Data: data}
	if err := direct.Create(context.Background(), cm); err != nil {
		t.Fatalf("creating ConfigMap %s/%s: %v", ns, name, err)
	}
	return cm
}

func addNamespace(t *testing.T, c *Cache, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.AddNamespace(ctx, ns); err != nil {
		t.Fatalf("AddNamespace(%s): %v", ns, err)
	}
}

// eventually polls cond for up to ten seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type event struct{ op, namespace, name string }

// recorder is an event handler that remembers what it was told.
type recorder struct {
	mu     sync.Mutex
	events []event
}

var _ toolscache.ResourceEventHandler = (*recorder)(nil)

func (r *recorder) add(op string, obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event{op, o.GetNamespace(), o.GetName()})
}

func (r *recorder) OnAdd(obj any, _ bool) { r.add("add", obj) }
func (r *recorder) OnUpdate(_, obj any)   { r.add("update", obj) }
func (r *recorder) OnDelete(obj any)      { r.add("delete", obj) }
func (r *recorder) saw(e event) bool      { return r.count(func(x event) bool { return x == e }) > 0 }
func (r *recorder) ops(op string) int     { return r.count(func(x event) bool { return x.op == op }) }
func (r *recorder) in(ns string) int      { return r.count(func(x event) bool { return x.namespace == ns }) }
func (r *recorder) count(f func(event) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if f(e) {
			n++
		}
	}
	return n
}
