package rollout

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestWorkloadsIn: a replica gaining namespaces queues their workloads,
// of every kind, and none of the others.
func TestWorkloadsIn(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := appsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "gained", Name: "web"}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "gained", Name: "db"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", Name: "web"}},
	).Build()
	want := []reconcile.Request{request("Deployment", "gained", "web"), request("StatefulSet", "gained", "db")}
	reqs, err := workloadsIn(c)(context.Background(), nil, func(key string) bool { return key == "gained" })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(reqs, want) {
		t.Errorf("queued %v, want %v", reqs, want)
	}
	// Told the namespaces gained, it lists those alone.
	reqs, err = workloadsIn(c)(context.Background(), []string{"gained"}, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(reqs, want) {
		t.Errorf("given the namespace gained, queued %v, want %v", reqs, want)
	}
}
