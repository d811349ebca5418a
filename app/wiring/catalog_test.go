package wiring

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	upgen "github.com/eso-dev/eso/apis/upstreamv1/generators"
	"github.com/eso-dev/eso/app/v1compat"
	"github.com/eso-dev/eso/app/v1compat/migrate"
	"github.com/eso-dev/eso/providers/catalog"
	"github.com/eso-dev/eso/providers/plugin"
)

// moduleRoot is where paths relative to the module root start from here.
const moduleRoot = "../.."

// TestCompiledInKindsAreTheCatalogs: what each catalog line's package
// registers is the kind the line names, the kind its RBAC and migrate's
// lists follow.
func TestCompiledInKindsAreTheCatalogs(t *testing.T) {
	compiled := map[plugin.Role][]string{}
	for _, r := range Plugins() {
		compiled[r.Role()] = append(compiled[r.Role()], r.Kind)
	}
	for role, components := range map[plugin.Role][]catalog.Component{plugin.RoleProvider: catalog.Providers, plugin.RoleGenerator: catalog.Generators} {
		var listed []string
		for _, c := range components {
			listed = append(listed, c.Kind)
		}
		if !slices.Equal(compiled[role], listed) {
			t.Errorf("%s kinds compiled in %v, the catalog lists %v", role, compiled[role], listed)
		}
	}
}

// TestEveryCatalogKindIsPermitted reads the ClusterRoles an install binds
// (core's and the provider process's) and fails when one does not grant
// its verbs on a catalog kind: a kind the role forgot would show only as a
// forbidden error on a cluster.
func TestEveryCatalogKindIsPermitted(t *testing.T) {
	plurals, err := catalog.ReadPlurals(filepath.Join(moduleRoot, "apis/crds"))
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range catalog.RBACRoles {
		data, err := os.ReadFile(filepath.Join(moduleRoot, role.ClusterRole))
		if err != nil {
			t.Fatal(err)
		}
		var cr rbacv1.ClusterRole
		if err := yaml.Unmarshal(data, &cr); err != nil {
			t.Fatalf("%s: %v", role.ClusterRole, err)
		}
		for group, components := range map[string][]catalog.Component{catalog.ProviderGroup: catalog.Providers, catalog.GeneratorGroup: catalog.Generators} {
			for _, c := range components {
				resource, err := plurals(group, c.Kind)
				if err != nil {
					t.Fatal(err)
				}
				for _, verb := range role.Verbs {
					if !grants(cr.Rules, group, resource, verb) {
						t.Errorf("%s does not grant %s on %s.%s (%s): run make generate", role.ClusterRole, verb, resource, group, c.Package)
					}
				}
			}
		}
	}
}

func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
	})
}

// TestEveryProviderKindIsMigrated: eso migrate reads every catalog
// provider's configurations, so that one already there is compared and
// never taken over.
func TestEveryProviderKindIsMigrated(t *testing.T) {
	scheme, err := migrate.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	kinds := migrate.ConfigKinds(scheme)
	for _, c := range catalog.Providers {
		if !slices.Contains(kinds, c.Kind) {
			t.Errorf("eso migrate does not read %s configurations (%s): register the type in apis/providers/v2alpha1", c.Kind, c.Package)
		}
	}
}

// TestEveryUpstreamGeneratorKindIsServed: upstream's generator kinds the v1
// layer translates are eso's generator kinds (each catalog generator has
// its upstream kind, and the other way round), have a CRD of upstream's
// group, and core's ClusterRole reads them.
func TestEveryUpstreamGeneratorKindIsServed(t *testing.T) {
	plurals, err := catalog.ReadPlurals(filepath.Join(moduleRoot, "apis/crds"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(moduleRoot, "charts/eso/files/rbac/role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var core rbacv1.ClusterRole
	if err := yaml.Unmarshal(data, &core); err != nil {
		t.Fatal(err)
	}
	var upstream []string
	for _, k := range v1compat.GeneratorKinds() {
		if !k.Cluster {
			upstream = append(upstream, k.Kind)
		}
		resource, err := plurals(upgen.GroupVersion.Group, k.Kind)
		if err != nil {
			t.Errorf("upstream kind %s has no CRD: %v", k.Kind, err)
			continue
		}
		for _, verb := range []string{"get", "list", "watch"} {
			if !grants(core.Rules, upgen.GroupVersion.Group, resource, verb) {
				t.Errorf("core's ClusterRole does not grant %s on %s.%s: add it to app/manager/rbac.go", verb, resource, upgen.GroupVersion.Group)
			}
		}
	}
	var generators []string
	for _, c := range catalog.Generators {
		generators = append(generators, c.Kind)
	}
	slices.Sort(upstream)
	slices.Sort(generators)
	if !slices.Equal(upstream, generators) {
		t.Errorf("upstream kinds served %v, eso's generator kinds %v: each needs the other", upstream, generators)
	}
}
