package plugin

import (
	"strings"
	"testing"
)

// providerOf and generatorOf are registrations of a role that build nothing.
func providerOf(name, kind string) Registration {
	return Registration{Name: name, Kind: kind, NewProvider: func(Deps) Provider { return nil }}
}

func generatorOf(name, kind string) Registration {
	return Registration{Name: name, Kind: kind, NewGenerator: func(Deps) Generator { return nil }}
}

var (
	fakeRegistration       = providerOf("fake", "Fake")
	kubernetesRegistration = providerOf("kubernetes", "Kubernetes")
)

func TestIndexRejectsDuplicates(t *testing.T) {
	sameKind := kubernetesRegistration
	sameKind.Name = "kubernetes-2"
	sameName := fakeRegistration
	sameName.Kind = "Fake2"
	incomplete := Registration{Name: "x"}
	for name, tc := range map[string]struct {
		regs []Registration
		want string
	}{
		"kind twice": {[]Registration{kubernetesRegistration, sameKind}, "provider kind Kubernetes is registered twice"},
		"name twice": {[]Registration{fakeRegistration, sameName}, "provider name fake is registered twice"},
		"incomplete": {[]Registration{incomplete}, "incomplete"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewIndex(tc.regs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewCatalog error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestIndexLookup(t *testing.T) {
	c, err := NewIndex([]Registration{kubernetesRegistration, fakeRegistration})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Lookup(RoleProvider, "Fake"); !ok {
		t.Error("Fake not found")
	}
	if _, ok := c.Lookup(RoleProvider, "AWSSecretManager"); ok {
		t.Error("found a kind that was not registered")
	}
	regs := c.Registrations(RoleProvider)
	if len(regs) != 2 || regs[0].Name != "fake" || regs[1].Name != "kubernetes" {
		t.Errorf("Registrations not sorted by name: %v", regs)
	}
}

// TestIndexKeepsRolesApart: a provider and a generator may serve kinds of
// one name (their configurations are in different API groups).
func TestIndexKeepsRolesApart(t *testing.T) {
	c, err := NewIndex([]Registration{providerOf("fake", "Fake"), generatorOf("fake", "Fake")})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := c.Lookup(RoleProvider, "Fake")
	g, _ := c.Lookup(RoleGenerator, "Fake")
	if p.Role() != RoleProvider || g.Role() != RoleGenerator {
		t.Errorf("looked up %s and %s", p.Role(), g.Role())
	}
	if _, err := NewIndex([]Registration{{Name: "both", Kind: "Both", NewProvider: func(Deps) Provider { return nil },
		NewGenerator: func(Deps) Generator { return nil }}}); err == nil {
		t.Error("a registration of both roles was indexed")
	}
}
