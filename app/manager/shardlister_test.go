package manager

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// TestShardLister: what a controller queues for the namespaces its replica
// gains. Told which namespaces, it lists those alone; a cluster-scoped kind
// then gains nothing.
func TestShardLister(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{esv1.AddToScheme, ssv2.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	es := func(ns, name string) *esv1.ExternalSecret {
		return &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	css := &ssv2.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}
	cache := fake.NewClientBuilder().WithScheme(scheme).WithObjects(es("a", "x"), es("a", "y"), es("b", "x"), es("c", "x"), css).Build()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(esv1.GroupVersion.WithKind("ExternalSecret"), meta.RESTScopeNamespace)
	mapper.Add(ssv2.GroupVersion.WithKind("ClusterSecretStore"), meta.RESTScopeRoot)
	all := func(string) bool { return true }
	req := func(ns, name string) reconcile.Request {
		return reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}
	}

	list := shardLister(cache, scheme, mapper, &esv1.ExternalSecret{})
	for _, tc := range []struct {
		name       string
		namespaces []string
		keep       func(string) bool
		want       []reconcile.Request
	}{
		{"every namespace, as keep says", nil, func(k string) bool { return k != "b" }, []reconcile.Request{req("a", "x"), req("a", "y"), req("c", "x")}},
		{"the namespaces gained alone", []string{"a", "c"}, all, []reconcile.Request{req("a", "x"), req("a", "y"), req("c", "x")}},
		{"none gained", []string{}, all, nil},
	} {
		got, err := list(context.Background(), tc.namespaces, tc.keep)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		slices.SortFunc(got, func(a, b reconcile.Request) int {
			return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
		})
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: queued %v, want %v", tc.name, got, tc.want)
		}
	}

	stores := shardLister(cache, scheme, mapper, &ssv2.ClusterSecretStore{})
	if got, err := stores(context.Background(), nil, all); err != nil || !slices.Equal(got, []reconcile.Request{req("", "shared")}) {
		t.Errorf("cluster-scoped, every name: %v, %v", got, err)
	}
	if got, err := stores(context.Background(), []string{"a"}, all); err != nil || len(got) != 0 {
		t.Errorf("cluster-scoped, namespaces gained: %v, %v; want nothing", got, err)
	}
}
