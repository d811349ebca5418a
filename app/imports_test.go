package app

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/eso-dev/eso/providers/catalog"
)

// corePackages are eso's core, derived from the tree: every package but
// the composition roots (main, this package, app/wiring, which reach the
// build-tagged wiring), the provider and generator packages themselves, and
// the build and test tooling. The shared plugin packages below providers/
// are core, and so is sdk: a provider built with it must not link eso's
// cloud SDKs either.
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
		case rel == "" || rel == "app" || rel == "app/wiring":
		case (top == "providers" || top == "generators") && !shared(rel):
		case top == "build" || top == "tests":
		default:
			core = append(core, pkg)
		}
	}
	return core
}

// shared reports whether a package below providers/ is not a provider but
// the plugin room (the contract and what using plugins takes), what
// providers share, the v1 blocks or the catalog. Core and sdk may use
// them, so they link no SDK either.
func shared(rel string) bool {
	switch rel {
	case "providers/plugin", "providers/kit", "providers/v1blocks", "providers/catalog":
		return true
	}
	return strings.HasPrefix(rel, "providers/plugin/")
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
		rel := strings.TrimPrefix(dep, catalog.Module+"/")
		if strings.HasPrefix(rel, "providers/") && !shared(rel) {
			t.Errorf("core depends on provider package %s", dep)
		}
		for _, sdk := range sdkModules() {
			if strings.HasPrefix(dep, sdk) {
				t.Errorf("core depends on provider SDK package %s", dep)
			}
		}
	}
}

// floor is where a package of the module stands in the house: a package
// may import its own floor and those below, never one above. Higher is
// nearer main.
func floor(rel string) (int, string) {
	top, _, _ := strings.Cut(rel, "/")
	switch {
	case top == "build" || top == "tests" || strings.HasSuffix(rel, "test"):
		return tooling, "test and build tooling"
	case top == "apis":
		return 0, "apis"
	case rel == "providers/plugin" || strings.HasPrefix(rel, "providers/plugin/") || rel == "providers/catalog":
		return 1, "the plugin room"
	case rel == "providers/kit" || rel == "providers/v1blocks":
		return 2, "what plugins share"
	case top == "providers":
		return 3, "providers"
	case top == "generators":
		return 4, "generators"
	case top == "sdk":
		return 5, "sdk"
	case top == "app":
		return 6, "app"
	case rel == "":
		return 7, "main"
	default:
		return tooling, top
	}
}

// tooling is the floor of build and test tooling (build/, tests/, the
// ...test helper packages): above everything it exercises. A package's
// tests may use it; the package itself may not.
const tooling = 8

// TestImportsRunDownTheFloors keeps the house's arrows pointing down:
// main -> app -> sdk -> generators -> providers -> the shared plugin
// packages -> the contract -> apis. Go refuses import cycles between
// packages; this refuses them between floors. Tests may also use the
// test tooling.
func TestImportsRunDownTheFloors(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "e2e", "-f", `{{.ImportPath}} {{join .Imports " "}} | {{join .TestImports " "}} {{join .XTestImports " "}}`, catalog.Module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	prefix := catalog.Module + "/"
	rel := func(pkg string) (string, bool) {
		if pkg == catalog.Module {
			return "", true
		}
		return strings.CutPrefix(pkg, prefix)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		from, _ := rel(fields[0])
		fromFloor, fromName := floor(from)
		inTests := false
		for _, imp := range fields[1:] {
			if imp == "|" {
				inTests = true
				continue
			}
			to, ours := rel(imp)
			if !ours {
				continue
			}
			checked++
			toFloor, toName := floor(to)
			if inTests && toFloor == tooling {
				continue
			}
			if toFloor > fromFloor {
				t.Errorf("%s (%s) imports %s (%s), a floor up", fields[0], fromName, imp, toName)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d imports checked: go list output not understood", checked)
	}
}
