package externalsecret

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// TestUnchangedOutputIsNotReadAgain: a refresh whose rendered output is
// what this process last wrote into the target, at the version the cache
// shows, neither reads the target nor writes it; another output reads it
// whole and writes it.
func TestUnchangedOutputIsNotReadAgain(t *testing.T) {
	ctx := context.Background()
	es := stepES(func(es *esv1.ExternalSecret) { es.Spec.Target.CreationPolicy = esv1.CreatePolicyOwner })
	r := applyReconciler(t)
	reads := &countingReader{Reader: r.APIReader}
	r.APIReader = reads
	sync := func(target *corev1.Secret, value string) {
		t.Helper()
		sc := &syncScope{es: es, now: t0, target: target, metadataOnly: target != nil,
			fetched: fetchResult{data: map[string][]byte{"a": []byte(value)}}}
		if _, err := r.apply(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	current := func() *corev1.Secret {
		t.Helper()
		var s corev1.Secret
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: es.Namespace, Name: es.TargetName()}, &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	asCached := func(s *corev1.Secret) *corev1.Secret {
		m := s.DeepCopy()
		m.Data = nil
		return m
	}

	sync(nil, "1") // created
	written := current()
	sync(asCached(written), "1")
	if now := current(); reads.reads != 0 || now.ResourceVersion != written.ResourceVersion {
		t.Fatalf("an unchanged refresh read the target %d times and moved it from version %s to %s", reads.reads, written.ResourceVersion, now.ResourceVersion)
	}
	sync(asCached(written), "2")
	if now := current(); reads.reads != 1 || string(now.Data["a"]) != "2" {
		t.Fatalf("a changed refresh read the target %d times and left %q", reads.reads, now.Data["a"])
	}
	// Someone else's edit moves the version: the record no longer covers
	// it, so the next sync judges it whole (loadTarget), not from memory.
	edited := current()
	edited.Data["a"] = []byte("tampered")
	if err := r.Client.Update(ctx, edited); err != nil {
		t.Fatal(err)
	}
	if rec, ok := r.lastVerified(es); ok && rec.covers(es, &current().ObjectMeta) {
		t.Fatal("the record still vouches for a target someone else edited")
	}
}
