package registry

import (
	"strings"
	"testing"

	"github.com/eso-dev/eso/providers/fake"
	"github.com/eso-dev/eso/providers/kubernetes"
	"github.com/eso-dev/eso/providers/plugin"
)

func TestCatalogRejectsDuplicates(t *testing.T) {
	sameKind := kubernetes.Registration
	sameKind.Name = "kubernetes-2"
	sameName := fake.Registration
	sameName.Kind = "Fake2"
	incomplete := plugin.Registration{Name: "x"}
	for name, tc := range map[string]struct {
		regs []plugin.Registration
		want string
	}{
		"kind twice": {[]plugin.Registration{kubernetes.Registration, sameKind}, "provider kind Kubernetes is registered twice"},
		"name twice": {[]plugin.Registration{fake.Registration, sameName}, "provider name fake is registered twice"},
		"incomplete": {[]plugin.Registration{incomplete}, "incomplete"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewCatalog(tc.regs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewCatalog error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCatalogLookup(t *testing.T) {
	c, err := NewCatalog([]plugin.Registration{kubernetes.Registration, fake.Registration})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Lookup(plugin.RoleProvider, "Fake"); !ok {
		t.Error("Fake not found")
	}
	if _, ok := c.Lookup(plugin.RoleProvider, "AWSSecretManager"); ok {
		t.Error("found a kind that was not registered")
	}
	regs := c.Registrations(plugin.RoleProvider)
	if len(regs) != 2 || regs[0].Name != "fake" || regs[1].Name != "kubernetes" {
		t.Errorf("Registrations not sorted by name: %v", regs)
	}
}
