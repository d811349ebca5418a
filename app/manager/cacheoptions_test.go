package manager

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/config"
)

// TestCacheDropsManagedFields: cached objects lose their managedFields,
// which eso never reads, and keep everything else: an ExternalSecret's
// annotations (kubectl's last-applied-configuration too) go to its target
// and into status.syncedResourceVersion, so dropping one would rewrite
// both.
func TestCacheDropsManagedFields(t *testing.T) {
	opts := CacheOptions(config.Default())
	if opts.DefaultTransform == nil {
		t.Fatal("no default transform")
	}
	annotations := map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"spec":{}}`}
	es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns", Generation: 3, Annotations: annotations,
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}}}
	want := es.DeepCopy()
	want.ManagedFields = nil
	out, err := opts.DefaultTransform(es)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*esv1.ExternalSecret)
	if got.ManagedFields != nil || got.Annotations["kubectl.kubernetes.io/last-applied-configuration"] == "" || got.Generation != 3 {
		t.Errorf("cached ExternalSecret %+v, want %+v", got.ObjectMeta, want.ObjectMeta)
	}
	// Secrets keep their own, stricter transform.
	trimmed := false
	for obj, by := range opts.ByObject {
		if obj.GetObjectKind().GroupVersionKind() == SecretGVK {
			trimmed = by.Transform != nil
		}
	}
	if !trimmed {
		t.Error("Secrets lost TrimSecret")
	}
}
