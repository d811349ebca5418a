package server

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// TestConfigFingerprintsReadOncePerTTL: requests within the TTL cost no API
// read, a missing configuration is remembered too, an API error is not.
func TestConfigFingerprintsReadOncePerTTL(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := provv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var reads atomic.Int32
	var failing atomic.Bool
	kube := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(&provv1.Fake{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "ns", UID: "u1", Generation: 3}}).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			reads.Add(1)
			if failing.Load() {
				return errors.New("API server unreachable")
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	c := newConfigFingerprints(kube, 5*time.Second)
	now := time.Now()
	c.now = func() time.Time { return now }
	ctx := context.Background()
	newFake := func() client.Object { return &provv1.Fake{} }
	demo, gone := plugin.Ref{Kind: "Fake", Name: "demo", Namespace: "ns"}, plugin.Ref{Kind: "Fake", Name: "gone", Namespace: "ns"}

	for range 3 {
		if fp, err := c.Fingerprint(ctx, demo, newFake); err != nil || fp != "u1/3" {
			t.Fatalf("Fingerprint = %q, %v", fp, err)
		}
		if _, err := c.Fingerprint(ctx, gone, newFake); !errors.Is(err, plugin.ErrConfigNotFound) {
			t.Fatalf("a missing configuration: %v", err)
		}
	}
	if reads.Load() != 2 {
		t.Fatalf("%d reads for six requests within the TTL, want 2", reads.Load())
	}
	now = now.Add(6 * time.Second)
	failing.Store(true)
	for range 2 {
		if _, err := c.Fingerprint(ctx, demo, newFake); err == nil {
			t.Fatal("an API error was hidden")
		}
	}
	if reads.Load() != 4 {
		t.Fatalf("an API error was remembered: %d reads", reads.Load())
	}
	failing.Store(false)
	if fp, err := c.Fingerprint(ctx, demo, newFake); err != nil || fp != "u1/3" {
		t.Fatalf("after recovery: %q, %v", fp, err)
	}

	// Sweep keeps what has not expired and drops what has.
	c.Sweep()
	if n := len(c.entries); n != 1 {
		t.Fatalf("Sweep of a fresh entry left %d entries, want 1", n)
	}
	now = now.Add(time.Hour)
	c.Sweep()
	if n := len(c.entries); n != 0 {
		t.Fatalf("Sweep after expiry left %d entries", n)
	}
}
