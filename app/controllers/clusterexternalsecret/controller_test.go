package clusterexternalsecret

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// newScheme knows core kinds and eso's ExternalSecrets.
func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, esv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return scheme
}

// TestTenantExternalSecretsAreNeverTakenOver: a ClusterExternalSecret
// writes its ExternalSecret only where it owns it or none exists. A
// tenant's own ExternalSecret of the same name is left exactly as it was
// and reported as a failed namespace, and one carrying the owner label
// without the controller reference is never pruned; the ExternalSecrets the
// ClusterExternalSecret made are created and pruned as namespaces come
// and go.
func TestTenantExternalSecretsAreNeverTakenOver(t *testing.T) {
	ctx := context.Background()
	ces := &esv1.ClusterExternalSecret{ObjectMeta: metav1.ObjectMeta{Name: "shared", UID: types.UID("ces-uid"), Generation: 1},
		Spec: esv1.ClusterExternalSecretSpec{
			NamespaceSelectors: []*metav1.LabelSelector{{MatchLabels: map[string]string{"shared": "yes"}}},
			ExternalSecretSpec: esv1.ExternalSecretSpec{SecretStoreRef: &esv1.SecretStoreRef{Name: "platform"}},
		}}
	tenantsOwn := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "shared"},
		Spec: esv1.ExternalSecretSpec{SecretStoreRef: &esv1.SecretStoreRef{Name: "tenants-store"}}}
	labelledOnly := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-c", Name: "shared",
		Labels: map[string]string{esv1.LabelClusterExternalSecret: "shared"}},
		Spec: esv1.ExternalSecretSpec{SecretStoreRef: &esv1.SecretStoreRef{Name: "tenants-store"}}}
	c := ctrlfake.NewClientBuilder().WithScheme(newScheme(t)).WithStatusSubresource(&esv1.ClusterExternalSecret{}).
		WithObjects(ces, tenantsOwn, labelledOnly,
			namespace("team-a", map[string]string{"shared": "yes"}),
			namespace("team-b", map[string]string{"shared": "yes"}),
			namespace("team-c", nil)).Build()
	r := kind.Reconciler(c, record.NewFakeRecorder(100))
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ces)}); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ces), ces); err != nil {
			t.Fatal(err)
		}
	}
	unchanged := func(want *esv1.ExternalSecret) {
		t.Helper()
		var got esv1.ExternalSecret
		if err := c.Get(ctx, client.ObjectKeyFromObject(want), &got); err != nil {
			t.Fatalf("%s/%s: %v", want.Namespace, want.Name, err)
		}
		if got.Spec.SecretStoreRef.Name != "tenants-store" || len(got.OwnerReferences) != 0 || got.ResourceVersion != want.ResourceVersion {
			t.Errorf("the tenant's ExternalSecret %s/%s was changed: %+v", want.Namespace, want.Name, got.ObjectMeta)
		}
	}
	for _, es := range []*esv1.ExternalSecret{tenantsOwn, labelledOnly} {
		if err := c.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
			t.Fatal(err)
		}
	}

	reconcile()
	var made esv1.ExternalSecret
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "shared"}, &made); err != nil || !metav1.IsControlledBy(&made, ces) {
		t.Fatalf("team-a: %v, controlled %v", err, metav1.IsControlledBy(&made, ces))
	}
	unchanged(tenantsOwn)
	unchanged(labelledOnly)
	if !slices.Equal(ces.Status.ProvisionedNamespaces, []string{"team-a"}) || len(ces.Status.FailedNamespaces) != 1 || ces.Status.FailedNamespaces[0].Namespace != "team-b" {
		t.Errorf("provisioned %v, failed %+v; want team-a and team-b", ces.Status.ProvisionedNamespaces, ces.Status.FailedNamespaces)
	}

	// team-a leaves the selection, team-b too: only what the
	// ClusterExternalSecret made goes.
	for _, ns := range []string{"team-a", "team-b"} {
		if err := c.Update(ctx, namespace(ns, nil)); err != nil {
			t.Fatal(err)
		}
	}
	reconcile()
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "shared"}, &esv1.ExternalSecret{}); !apierrors.IsNotFound(err) {
		t.Errorf("team-a's ExternalSecret was not pruned: %v", err)
	}
	unchanged(tenantsOwn)
	unchanged(labelledOnly)
}
