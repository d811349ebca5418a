package integration

import (
	"context"
	"crypto/sha3"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// TestSecretUpstreamWroteIsAdopted: an ExternalSecret whose target Secret
// upstream ESO wrote (its labels, its SHA3-224 data-hash, controlled by the
// ExternalSecret) and which holds what the provider has becomes Ready
// without eso writing the Secret, also across refreshes.
func TestSecretUpstreamWroteIsAdopted(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t, "adopt", nil)
	create(t, fakeConfig(ns, "fake", map[string]string{"api": "token-1"}))
	create(t, secretStore(ns, "store", storeSpec("Fake", "fake", "")))
	es := externalSecret(ns, "app", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{"api": ref("api", "")})
	es.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second}
	create(t, es)
	data := map[string][]byte{"api": []byte("token-1")}
	upstream := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: "app", Namespace: ns,
			Labels: map[string]string{
				esv1.LabelManaged:                          "true",
				"reconcile.external-secrets.io/created-by": fmt.Sprintf("%x", sha3.Sum224([]byte(ns+"/app"))),
			},
			Annotations: map[string]string{esv1.AnnotationDataHash: fmt.Sprintf("%x", sha3.Sum224([]byte(fmt.Sprintf("%+v", data))))},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "external-secrets.io/v1", Kind: "ExternalSecret", Name: "app",
				UID: es.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
	create(t, upstream)

	runEso(t, testConfig())
	waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)
	time.Sleep(3 * time.Second) // refreshes
	var now corev1.Secret
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(upstream), &now); err != nil {
		t.Fatal(err)
	}
	if now.ResourceVersion != upstream.ResourceVersion {
		t.Fatalf("eso rewrote the Secret upstream wrote: labels %v, annotations %v", now.Labels, now.Annotations)
	}
}
