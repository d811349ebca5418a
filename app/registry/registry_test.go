package registry

import (
	"strings"
	"testing"

	"github.com/eso-dev/eso/providers"
	"github.com/eso-dev/eso/providers/fake"
	"github.com/eso-dev/eso/providers/kubernetes"
)

func TestCatalogRejectsDuplicates(t *testing.T) {
	sameKind := kubernetes.Registration
	sameKind.Name = "kubernetes-2"
	sameName := fake.Registration
	sameName.Kind = "Fake2"
	incomplete := providers.Registration{Name: "x"}
	for name, tc := range map[string]struct {
		regs []providers.Registration
		want string
	}{
		"kind twice": {[]providers.Registration{kubernetes.Registration, sameKind}, "provider kind Kubernetes is registered twice"},
		"name twice": {[]providers.Registration{fake.Registration, sameName}, "provider name fake is registered twice"},
		"incomplete": {[]providers.Registration{incomplete}, "incomplete"},
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
	c, err := NewCatalog([]providers.Registration{kubernetes.Registration, fake.Registration})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Lookup("Fake"); !ok {
		t.Error("Fake not found")
	}
	if _, ok := c.Lookup("AWSSecretManager"); ok {
		t.Error("found a kind that was not registered")
	}
	regs := c.Registrations()
	if len(regs) != 2 || regs[0].Name != "fake" || regs[1].Name != "kubernetes" {
		t.Errorf("Registrations not sorted by name: %v", regs)
	}
}
