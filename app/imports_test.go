package app

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/eso-dev/eso/providers/catalog"
)

// corePackages are eso's core, derived from the tree: every package but
// the composition roots (main, this package, providers/register, which
// reach the build-tagged wiring), the provider and generator packages
// themselves, and the build and test tooling. The contract packages
// providers and generators are core, and so is sdk: a provider built with
// it must not link eso's cloud SDKs either.
func corePackages(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", catalog.Module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var core []string
	for _, pkg := range strings.Fields(string(out)) {
		rel, _ := strings.CutPrefix(strings.TrimPrefix(pkg, catalog.Module), "/")
		top, _, _ := strings.Cut(rel, "/")
		switch {
		case rel == "" || rel == "app" || rel == "providers/register":
		case (top == "providers" || top == "generators") && rel != top:
		case top == "build" || top == "tests":
		default:
			core = append(core, pkg)
		}
	}
	return core
}

// sdkModules are the provider SDKs, as the catalog names them.
func sdkModules() []string {
	var modules []string
	for _, tag := range catalog.Tags {
		modules = append(modules, tag.Modules...)
	}
	return modules
}

// TestCorePackagesImportNoProviderSDK keeps controllers, stores, manager,
// registry and the API types free of provider packages and their SDKs.
func TestCorePackagesImportNoProviderSDK(t *testing.T) {
	core := corePackages(t)
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, core...)
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !strings.Contains(string(out), "github.com/eso-dev/eso/app/controllers/externalsecret") {
		t.Fatalf("go list did not reach the controllers: %v", deps)
	}
	for _, dep := range deps {
		// The kit is what providers share and links no SDK; the sdk
		// package serves providers with it. v1blocks reads upstream's
		// provider blocks for the v1 store layer and the Vault generator
		// alike, and links no SDK either.
		if strings.HasPrefix(dep, "github.com/eso-dev/eso/providers/") && dep != catalog.Module+"/providers/kit" && dep != catalog.Module+"/providers/v1blocks" {
			t.Errorf("core depends on provider package %s", dep)
		}
		for _, sdk := range sdkModules() {
			if strings.HasPrefix(dep, sdk) {
				t.Errorf("core depends on provider SDK package %s", dep)
			}
		}
	}
}
