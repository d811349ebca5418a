package manager

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper knows one kind and counts what it is asked.
type countingMapper struct {
	meta.RESTMapper
	asked int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.asked++
	return c.RESTMapper.RESTMapping(gk, versions...)
}

// TestRememberedMappings: a found mapping is asked of the mapper once per
// kind and versions; one not found is asked again, so a kind installed
// later is found.
func TestRememberedMappings(t *testing.T) {
	secret := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	known := meta.NewDefaultRESTMapper([]schema.GroupVersion{secret.GroupVersion()})
	known.Add(secret, meta.RESTScopeNamespace)
	inner := &countingMapper{RESTMapper: known}
	m := &rememberedMappings{RESTMapper: inner}

	for range 3 {
		got, err := m.RESTMapping(secret.GroupKind(), "v1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Resource.Resource != "secrets" || got.Scope.Name() != meta.RESTScopeNameNamespace {
			t.Fatalf("mapping %+v", got)
		}
	}
	if inner.asked != 1 {
		t.Errorf("the mapper was asked %d times for one kind, want 1", inner.asked)
	}
	if _, err := m.RESTMapping(secret.GroupKind()); err != nil {
		t.Fatal(err)
	}
	if inner.asked != 2 {
		t.Errorf("a call without versions was answered from the versioned one: asked %d times, want 2", inner.asked)
	}

	later := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Later"}
	if _, err := m.RESTMapping(later.GroupKind(), "v1"); !meta.IsNoMatchError(err) {
		t.Fatalf("an unknown kind: %v, want no match", err)
	}
	known.Add(later, meta.RESTScopeRoot)
	got, err := m.RESTMapping(later.GroupKind(), "v1")
	if err != nil {
		t.Fatalf("a kind installed after it was asked for: %v", err)
	}
	if got.Scope.Name() != meta.RESTScopeNameRoot {
		t.Errorf("scope %s, want root", got.Scope.Name())
	}
}
