package externalsecret

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/manager"
)

// TestEchoesOwnWrite: a Secret event is dropped only when it brings back
// the very Secret and version this process recorded for the ExternalSecret
// of its name, and no other ExternalSecret targets it. Every other event
// (a version or a Secret eso did not record, a trimmed cache entry, a
// second writer) still reconciles.
func TestEchoesOwnWrite(t *testing.T) {
	const ns = "tenant"
	record := verifiedTarget{es: "es-uid", targetRecord: targetRecord{name: "app", resourceVersion: "7", uid: "secret-uid"}}
	other := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other"},
		Spec: esv1.ExternalSecretSpec{Target: esv1.ExternalSecretTarget{Name: "app"}}}
	cases := map[string]struct {
		record *verifiedTarget
		secret func(*metav1.PartialObjectMetadata)
		others []client.Object
		want   bool
	}{
		"the version eso wrote":             {record: &record, want: true},
		"no record":                         {},
		"another version":                   {record: &record, secret: func(m *metav1.PartialObjectMetadata) { m.ResourceVersion = "8" }},
		"a Secret recreated under the name": {record: &record, secret: func(m *metav1.PartialObjectMetadata) { m.UID = "new-uid" }},
		"the record is of another target":   {record: &verifiedTarget{targetRecord: targetRecord{name: "elsewhere", resourceVersion: "7", uid: "secret-uid"}}},
		"the cache trimmed it": {record: &record, secret: func(m *metav1.PartialObjectMetadata) {
			m.Annotations = map[string]string{manager.AnnotationCacheTrimmed: "true"}
		}},
		"another ExternalSecret targets it": {record: &record, others: []client.Object{other}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := esv1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			c := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.others...).
				WithIndex(&esv1.ExternalSecret{}, indexTarget, targetIndex).Build()
			r := &Reconciler{Client: c}
			if tc.record != nil {
				r.verified.Store(types.NamespacedName{Namespace: ns, Name: "app"}, *tc.record)
			}
			s := manager.NewSecretMetadata()
			s.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "app", UID: "secret-uid", ResourceVersion: "7"}
			if tc.secret != nil {
				tc.secret(s)
			}
			if got := r.echoesOwnWrite(s); got != tc.want {
				t.Errorf("echoesOwnWrite = %v, want %v", got, tc.want)
			}
		})
	}
}
