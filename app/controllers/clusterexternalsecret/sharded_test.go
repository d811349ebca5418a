package clusterexternalsecret

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/shardcache"
)

// countingReader counts the reads that reach the API server.
type countingReader struct {
	client.Reader
	gets atomic.Int32
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.gets.Add(1)
	return r.Reader.Get(ctx, key, obj, opts...)
}

// TestShardedChildrenAreReadOnlyWhenChanged: with --shards auto, a child in
// a namespace this replica does not cache is judged from its cached
// metadata. A steady reconcile reads nothing from the API server; an edit of
// the child (a new generation) costs one read, and is reverted.
func TestShardedChildrenAreReadOnlyWhenChanged(t *testing.T) {
	ctx := context.Background()
	ces := &esv1.ClusterExternalSecret{ObjectMeta: metav1.ObjectMeta{Name: "shared", UID: "ces-uid", Generation: 1},
		Spec: esv1.ClusterExternalSecretSpec{Namespaces: []string{"near", "far"},
			ExternalSecretSpec: esv1.ExternalSecretSpec{SecretStoreRef: &esv1.SecretStoreRef{Name: "platform"}}}}
	base := ctrlfake.NewClientBuilder().WithScheme(newScheme(t)).WithStatusSubresource(&esv1.ClusterExternalSecret{}).
		WithObjects(ces, namespace("near", nil), namespace("far", nil)).Build()
	uids := 0
	// As the API server: objects get a UID, and a new generation on update.
	// As the shard cache: ExternalSecrets of "far" are not cached here.
	c := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, typed := obj.(*esv1.ExternalSecret); typed && key.Namespace == "far" {
				return fmt.Errorf("ExternalSecret in namespace %q: %w", key.Namespace, shardcache.ErrNotOwned)
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			uids++
			obj.SetUID(types.UID(fmt.Sprintf("uid-%d", uids)))
			obj.SetGeneration(1)
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			obj.SetGeneration(obj.GetGeneration() + 1)
			return c.Update(ctx, obj, opts...)
		},
	})
	api := &countingReader{Reader: base}
	r := kind.Reconciler(c, record.NewFakeRecorder(100))
	r.Uncached = api
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ces)}); err != nil {
			t.Fatal(err)
		}
	}

	reconcile()
	far := &esv1.ExternalSecret{}
	if err := base.Get(ctx, client.ObjectKey{Namespace: "far", Name: "shared"}, far); err != nil {
		t.Fatalf("the child in far: %v", err)
	}
	for range 2 {
		api.gets.Store(0)
		reconcile()
		if n := api.gets.Load(); n != 0 {
			t.Errorf("a steady reconcile read %d children from the API server, want 0", n)
		}
	}

	far.Spec.SecretStoreRef.Name = "tenants-store"
	if err := c.Update(ctx, far); err != nil {
		t.Fatal(err)
	}
	api.gets.Store(0)
	reconcile()
	if n := api.gets.Load(); n != 1 {
		t.Errorf("after an edit of the far child, %d reads from the API server, want 1", n)
	}
	if err := base.Get(ctx, client.ObjectKeyFromObject(far), far); err != nil || far.Spec.SecretStoreRef.Name != "platform" {
		t.Errorf("the edit was not reverted: %v, store %q", err, far.Spec.SecretStoreRef.Name)
	}
	api.gets.Store(0)
	reconcile()
	if n := api.gets.Load(); n != 0 {
		t.Errorf("after the revert, a reconcile read %d children, want 0", n)
	}
}
