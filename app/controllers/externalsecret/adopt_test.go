package externalsecret

import (
	"context"
	"crypto/sha3"
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// TestUpstreamDataHashIsUpstreams: the streamed hash is SHA3-224 of what
// fmt prints for the map, as upstream ESO computes it.
func TestUpstreamDataHashIsUpstreams(t *testing.T) {
	if got := upstreamDataHash(map[string][]byte{}); got != "74a974446e359fb3e6baff9bd0058950e6edd0f040888d9989b0a11b" {
		t.Fatalf("hash of no data: %s", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		data := map[string][]byte{}
		for k := range rng.IntN(6) {
			v := make([]byte, rng.IntN(40))
			for i := range v {
				v[i] = byte(rng.IntN(256))
			}
			if rng.IntN(5) == 0 {
				v = nil
			}
			data[fmt.Sprintf("key-%d.%c", k, 'a'+rng.IntN(26))] = v
		}
		want := fmt.Sprintf("%x", sha3.Sum224([]byte(fmt.Sprintf("%+v", data))))
		if got := upstreamDataHash(data); got != want {
			t.Fatalf("%+v: %s, want %s", data, got, want)
		}
	}
}

// TestSecretUpstreamWroteIsAdopted: a Secret upstream wrote for this
// ExternalSecret, holding what eso would write, is adopted as it is; one
// whose data was edited, that another object controls, or that lacks what
// eso would add besides its bookkeeping, is not.
func TestSecretUpstreamWroteIsAdopted(t *testing.T) {
	es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "team", UID: "es-uid"}}
	data := map[string][]byte{"token": []byte("s3cr3t")}
	upstream := func() *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name: "app", Namespace: "team",
				Labels:      map[string]string{esv1.LabelManaged: "true", "reconcile.external-secrets.io/created-by": "b8464376"},
				Annotations: map[string]string{esv1.AnnotationDataHash: upstreamDataHash(data)},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "external-secrets.io/v1", Kind: "ExternalSecret", Name: "app",
					UID: "es-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			},
			Data: data,
		}
	}
	desiredFor := func(target *corev1.Secret) *corev1.Secret {
		d := target.DeepCopy()
		d.Data = data
		metav1.SetMetaDataAnnotation(&d.ObjectMeta, esv1.AnnotationManagedBy, es.Name)
		metav1.SetMetaDataAnnotation(&d.ObjectMeta, esv1.AnnotationDataHash, dataHash(data))
		return d
	}

	target := upstream()
	if !adoptedAsWritten(es, target, desiredFor(target)) {
		t.Error("a Secret upstream wrote, holding what eso would write, is not adopted")
	}
	if drifted(es, target) {
		t.Error("a Secret upstream wrote counts as drifted")
	}

	edited := upstream()
	edited.Data = map[string][]byte{"token": []byte("edited")}
	if adoptedAsWritten(es, edited, desiredFor(edited)) || !drifted(es, edited) {
		t.Error("a Secret whose data changed since upstream wrote it is adopted or not drifted")
	}

	foreign := upstream()
	foreign.OwnerReferences[0].UID = "someone-else"
	if adoptedAsWritten(es, foreign, desiredFor(foreign)) {
		t.Error("a Secret another object controls is adopted")
	}

	labelled := upstream()
	desired := desiredFor(labelled)
	metav1.SetMetaDataLabel(&desired.ObjectMeta, "team", "a")
	if adoptedAsWritten(es, labelled, desired) {
		t.Error("a Secret lacking a label the template sets is adopted")
	}

	esos := upstream()
	metav1.SetMetaDataAnnotation(&esos.ObjectMeta, esv1.AnnotationDataHash, dataHash(data))
	if adoptedAsWritten(es, esos, desiredFor(esos)) {
		t.Error("a Secret with eso's data-hash goes through adoption rather than eso's own comparison")
	}
}

// TestUpstreamSecretIsNotRewritten: a sync whose output is what upstream
// already wrote into the target leaves the Secret at its version.
func TestUpstreamSecretIsNotRewritten(t *testing.T) {
	ctx := context.Background()
	es := stepES(func(es *esv1.ExternalSecret) { es.Spec.Target.CreationPolicy = esv1.CreatePolicyOwner })
	r := applyReconciler(t)
	data := map[string][]byte{"a": []byte("1")}
	written := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: es.TargetName(), Namespace: es.Namespace,
			Labels:      map[string]string{esv1.LabelManaged: "true", "reconcile.external-secrets.io/created-by": "b8464376"},
			Annotations: map[string]string{esv1.AnnotationDataHash: upstreamDataHash(data)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "external-secrets.io/v1", Kind: "ExternalSecret", Name: es.Name,
				UID: es.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
	if err := r.Client.Create(ctx, written); err != nil {
		t.Fatal(err)
	}
	cached := written.DeepCopy()
	cached.Data = nil
	sc := &syncScope{es: es, now: t0, target: cached, metadataOnly: true, fetched: fetchResult{data: data}}
	if _, err := r.apply(ctx, sc); err != nil {
		t.Fatal(err)
	}
	var now corev1.Secret
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(written), &now); err != nil {
		t.Fatal(err)
	}
	if now.ResourceVersion != written.ResourceVersion {
		t.Fatalf("eso rewrote the Secret upstream wrote: annotations %v", now.Annotations)
	}
}
