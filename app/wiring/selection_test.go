package wiring

import (
	"bytes"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/eso-dev/eso/providers/catalog"
	"github.com/eso-dev/eso/providers/plugin"
)

// TestWiringIsGeneratedFromTheCatalog fails when a wiring file differs from
// what the catalog generates, or a hand-written one joined them.
func TestWiringIsGeneratedFromTheCatalog(t *testing.T) {
	want, err := catalog.Wiring()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "selection.go" || strings.HasPrefix(f, "v1layer") {
			continue
		}
		got, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		switch w, ok := want[f]; {
		case !ok:
			t.Errorf("%s is not generated from providers/catalog: list components there and run make generate", f)
		case !bytes.Equal(got, w):
			t.Errorf("%s is out of date with providers/catalog: run make generate", f)
		}
	}
	for name := range want {
		if !slices.Contains(files, name) {
			t.Errorf("%s is missing: run make generate", name)
		}
	}
}

// TestWiringFilesFollowTheSelectionRule parses every build-tagged file of this
// package and checks, for every combination of selection tags, that exactly the
// tags the rule selects are compiled in.
func TestWiringFilesFollowTheSelectionRule(t *testing.T) {
	constraints := map[string]constraint.Expr{} // tag -> constraint of its file
	for _, tag := range catalog.TagNames() {
		file := "zz_generated." + tag + ".go"
		expr := buildConstraint(t, file)
		if expr == nil {
			t.Errorf("%s: missing //go:build %s", file, catalog.Constraint(tag))
			continue
		}
		constraints[tag] = expr
	}
	selectionTags := catalog.SelectionTags()
	for mask := 0; mask < 1<<len(selectionTags); mask++ {
		var buildTags []string
		for i, tag := range selectionTags {
			if mask&(1<<i) != 0 {
				buildTags = append(buildTags, tag)
			}
		}
		var got []string
		for _, tag := range catalog.TagNames() {
			if expr, ok := constraints[tag]; ok && expr.Eval(func(s string) bool { return slices.Contains(buildTags, s) }) {
				got = append(got, tag)
			}
		}
		if want := catalog.Selected(buildTags); !slices.Equal(got, want) {
			t.Errorf("build tags %v: compiled in %v, want %v", buildTags, got, want)
		}
	}
}

func TestDefaultBuildSelectsEverything(t *testing.T) {
	// go test runs without selection tags, so every component is in.
	if got, want := Selection(), strings.Join(catalog.TagNames(), ","); got != want {
		t.Errorf("Selection() = %q in a default build, want %q", got, want)
	}
	roles := map[plugin.Role]int{}
	for _, r := range Plugins() {
		roles[r.Role()]++
	}
	if got, want := roles[plugin.RoleProvider], len(catalog.Providers); got != want {
		t.Errorf("%d providers compiled in, the catalog lists %d", got, want)
	}
	if got, want := roles[plugin.RoleGenerator], len(catalog.Generators); got != want {
		t.Errorf("%d generators compiled in, the catalog lists %d", got, want)
	}
	if _, err := plugin.NewIndex(Plugins()); err != nil {
		t.Errorf("the compiled-in plugins do not index: %v", err)
	}
}

func buildConstraint(t *testing.T, file string) constraint.Expr {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if constraint.IsGoBuild(c.Text) {
				expr, err := constraint.Parse(c.Text)
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				return expr
			}
		}
	}
	return nil
}
