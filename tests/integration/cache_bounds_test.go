package integration

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/manager"
)

// Anyone who may create a Secret may label it as eso's. The hostile tenant
// here creates many large Secrets so labelled, some with large annotations
// under eso's prefixes.
const (
	hostileSecrets          = 100
	hostileDataBytes        = 900 << 10
	hostileAnnotated        = 10
	hostileAnnotationBytes  = 200 << 10
	hostileCacheGrowthLimit = 24 << 20 // their data alone is ~88 MiB
)

// TestCacheHoldsNoSecretData: Secrets labelled as eso's reach eso's cache
// as metadata only, bounded per Secret, so a tenant cannot fill eso's
// memory with them; ExternalSecrets beside them still sync, a Secret
// edited behind eso's back is repaired, and a refresh that changes nothing
// writes nothing.
func TestCacheHoldsNoSecretData(t *testing.T) {
	ctx := context.Background()
	var mgr ctrl.Manager
	runEso(t, testConfig(), fx.Populate(&mgr))

	ns := env.Namespace(t, "cache-bounds", nil)
	tenant := env.Namespace(t, "cache-bounds-tenant", nil)
	t.Cleanup(func() {
		// Namespaces are not emptied here (no namespace controller): the
		// Secrets must not weigh on the tests that follow.
		if err := env.Client.DeleteAllOf(context.Background(), &corev1.Secret{}, client.InNamespace(tenant)); err != nil {
			t.Logf("deleting the tenant's Secrets: %v", err)
		}
	})
	create(t, fakeConfig(ns, "fake", map[string]string{"db": `{"password":"pw1"}`}), secretStore(ns, "store", storeSpec("Fake", "fake", "")))
	es := externalSecret(ns, "app", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "password")})
	create(t, es)
	waitSecretData(t, ns, "app", map[string]string{"password": "pw1"})
	waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)

	before := liveHeap()
	data := strings.Repeat("x", hostileDataBytes)
	for i := range hostileSecrets {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: fmt.Sprintf("filler-%03d", i),
			Labels: map[string]string{esv1.LabelManaged: esv1.LabelManagedValue}}, StringData: map[string]string{"blob": data}}
		if i < hostileAnnotated {
			s.Annotations = map[string]string{
				"reconcile.external-secrets.io/padding": strings.Repeat("a", hostileAnnotationBytes),
				esv1.AnnotationManagedBy:                "app",
			}
		}
		create(t, s)
	}

	// eso has seen every one of them.
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	eventually(t, "eso's cache to hold the tenant's Secrets", func() error {
		if err := mgr.GetCache().List(ctx, list, client.InNamespace(tenant)); err != nil {
			return err
		}
		if len(list.Items) != hostileSecrets {
			return fmt.Errorf("%d of %d", len(list.Items), hostileSecrets)
		}
		return nil
	})
	growth := int64(liveHeap()) - int64(before)
	t.Logf("live heap grew by %.1f MiB with %d labelled Secrets of %d KiB", float64(growth)/(1<<20), hostileSecrets, hostileDataBytes>>10)
	if growth > hostileCacheGrowthLimit {
		t.Errorf("live heap grew by %d MiB with the tenant's Secrets (limit %d MiB): eso holds their data",
			growth>>20, hostileCacheGrowthLimit>>20)
	}
	// As metadata within the bound.
	trimmed := 0
	for _, m := range list.Items {
		if len(m.ManagedFields) > 0 {
			t.Errorf("cached Secret %s keeps managedFields", m.Name)
		}
		if n := metadataBytes(m.ObjectMeta); n > manager.SecretMetadataBound {
			t.Errorf("cached Secret %s keeps %d bytes of labels and annotations, over %d", m.Name, n, manager.SecretMetadataBound)
		}
		if manager.CacheTrimmed(&m) {
			trimmed++
		}
	}
	if trimmed != hostileAnnotated {
		t.Errorf("%d cached Secrets marked as trimmed, want %d", trimmed, hostileAnnotated)
	}

	// An ExternalSecret created now syncs.
	later := externalSecret(ns, "later", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "password")})
	create(t, later)
	waitSecretData(t, ns, "later", map[string]string{"password": "pw1"})
	waitReady(t, later, metav1.ConditionTrue, esv1.ReasonSecretSynced)

	// Drift: someone edits the data; eso puts it back at once (the
	// refresh is an hour away).
	var target corev1.Secret
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app"}, &target); err != nil {
		t.Fatal(err)
	}
	target.Data["password"] = []byte("tampered")
	if err := env.Client.Update(ctx, &target); err != nil {
		t.Fatal(err)
	}
	synced := waitSecretData(t, ns, "app", map[string]string{"password": "pw1"})

	// A refresh that finds nothing changed writes nothing to the Secret.
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
		t.Fatal(err)
	}
	was := es.Status.SyncedResourceVersion
	annotate(t, es, esv1.AnnotationForceSync, "refresh")
	eventually(t, "the forced refresh", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
			return err
		}
		if es.Status.SyncedResourceVersion == was {
			return fmt.Errorf("not refreshed yet")
		}
		return nil
	})
	requireUnchanged(t, synced)

	// Even a typed read from eso's cache finds no data: the cache keeps no
	// Secret's data, whoever asks for it.
	var cached corev1.Secret
	if err := mgr.GetCache().Get(ctx, client.ObjectKey{Namespace: tenant, Name: "filler-000"}, &cached); err != nil {
		t.Fatal(err)
	}
	if len(cached.Data) > 0 {
		t.Errorf("eso's cache holds the data of Secret %s/%s", tenant, cached.Name)
	}
}

// liveHeap is the bytes of live heap objects after a collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func metadataBytes(m metav1.ObjectMeta) int {
	n := 0
	for k, v := range m.Labels {
		n += len(k) + len(v)
	}
	for k, v := range m.Annotations {
		if k != manager.AnnotationCacheTrimmed {
			n += len(k) + len(v)
		}
	}
	for _, o := range m.OwnerReferences {
		n += len(o.APIVersion) + len(o.Kind) + len(o.Name) + len(o.UID)
	}
	return n
}
