package manager

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

func TestEsoKindsAreTheObjects(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := esv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	kinds := esoKinds(scheme)["external-secrets.io/v1"]
	for _, want := range []string{"ExternalSecret", "ClusterExternalSecret"} {
		if !strings.Contains(strings.Join(kinds, ","), want) {
			t.Errorf("%s missing from %v", want, kinds)
		}
	}
	for _, k := range kinds {
		if strings.HasSuffix(k, "Options") || strings.HasSuffix(k, "List") || k == "WatchEvent" {
			t.Errorf("%s is no object kind", k)
		}
	}
}

// TestWaitForKinds: served kinds pass at once; a kind still missing at
// the deadline is named.
func TestWaitForKinds(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := esv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	served := func(kinds ...string) *fakediscovery.FakeDiscovery {
		list := &metav1.APIResourceList{GroupVersion: "external-secrets.io/v1"}
		for _, k := range kinds {
			list.APIResources = append(list.APIResources, metav1.APIResource{Kind: k, Name: strings.ToLower(k) + "s"})
		}
		return &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{list}}}
	}
	all := esoKinds(scheme)["external-secrets.io/v1"]
	if err := waitForKinds(context.Background(), served(all...), scheme, 0); err != nil {
		t.Errorf("every kind served: %v", err)
	}
	var some []string
	for _, k := range all {
		if k != "ExternalSecret" {
			some = append(some, k)
		}
	}
	err := waitForKinds(context.Background(), served(some...), scheme, 0)
	if err == nil || !strings.Contains(err.Error(), "external-secrets.io/v1/ExternalSecret") {
		t.Errorf("ExternalSecret not served: %v", err)
	}
}
