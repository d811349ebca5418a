package statuswrite

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

func status(o client.Object) *esv1.ExternalSecretStatus { return &o.(*esv1.ExternalSecret).Status }

// TestIfChanged: an unchanged status costs no request; a changed one one
// patch carrying only the status.
func TestIfChanged(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := esv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "es"}}
	patches := 0
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(es).WithStatusSubresource(es).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			patches++
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		}}).Build()
	ctx := context.Background()
	if err := c.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
		t.Fatal(err)
	}
	before := *es.Status.DeepCopy()
	if wrote, err := IfChanged(ctx, c, es, before, status, "ExternalSecret"); err != nil || wrote || patches != 0 {
		t.Fatalf("unchanged status: wrote %v, %d patches, %v", wrote, patches, err)
	}
	meta.SetStatusCondition(&es.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "SecretSynced"})
	if wrote, err := IfChanged(ctx, c, es, before, status, "ExternalSecret"); err != nil || !wrote || patches != 1 {
		t.Fatalf("changed status: wrote %v, %d patches, %v", wrote, patches, err)
	}
	var stored esv1.ExternalSecret
	if err := c.Get(ctx, client.ObjectKeyFromObject(es), &stored); err != nil || meta.FindStatusCondition(stored.Status.Conditions, "Ready") == nil {
		t.Fatalf("the status did not arrive: %+v, %v", stored.Status, err)
	}
}
