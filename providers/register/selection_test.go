package register

import (
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// wantSelected is the selection rule written out: no selection tag selects
// every SDK-backed component, any selection tag selects exactly those named.
func wantSelected(sdkTags []string, buildTags map[string]bool) []string {
	anySelection := false
	for _, t := range SelectionTags {
		anySelection = anySelection || buildTags[t]
	}
	var out []string
	for _, t := range sdkTags {
		if !anySelection || buildTags[t] {
			out = append(out, t)
		}
	}
	return out
}

// TestWiringFilesFollowTheSelectionRule parses every build-tagged file of this
// package and checks, for every combination of selection tags, that exactly the
// components the rule selects are compiled in.
func TestWiringFilesFollowTheSelectionRule(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	constraints := map[string]constraint.Expr{} // tag -> constraint of its file
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "selection.go" {
			continue
		}
		expr := buildConstraint(t, f)
		tag := strings.TrimSuffix(f, ".go")
		if !slices.Contains(SelectionTags, tag) || tag == "minimal" {
			t.Errorf("%s: wiring files are named after their selection tag (one of %v)", f, SelectionTags)
			continue
		}
		if expr == nil {
			t.Errorf("%s: missing //go:build %s", f, SelectionConstraint(tag))
			continue
		}
		constraints[tag] = expr
	}
	var sdkTags []string
	for _, tag := range SelectionTags {
		if tag == "minimal" {
			continue
		}
		sdkTags = append(sdkTags, tag)
		if _, ok := constraints[tag]; !ok {
			t.Errorf("selection tag %q has no wiring file %s.go", tag, tag)
		}
	}

	// Every subset of the selection tags.
	for mask := 0; mask < 1<<len(SelectionTags); mask++ {
		buildTags := map[string]bool{}
		for i, tag := range SelectionTags {
			if mask&(1<<i) != 0 {
				buildTags[tag] = true
			}
		}
		var got []string
		for _, tag := range sdkTags {
			if expr, ok := constraints[tag]; ok && expr.Eval(func(s string) bool { return buildTags[s] }) {
				got = append(got, tag)
			}
		}
		if want := wantSelected(sdkTags, buildTags); !slices.Equal(got, want) {
			t.Errorf("build tags %v: compiled in %v, want %v", keys(buildTags), got, want)
		}
	}
}

func TestSelectionConstraintParses(t *testing.T) {
	for _, tag := range SelectionTags {
		if _, err := constraint.Parse("//go:build " + SelectionConstraint(tag)); err != nil {
			t.Errorf("%s: %v", tag, err)
		}
	}
}

func TestDefaultBuildSelectsEverything(t *testing.T) {
	// go test runs without selection tags, so every SDK-backed component is in.
	if got := Selection(); got != "aws,gcp,vault" {
		t.Errorf("Selection() = %q in a default build", got)
	}
	kinds := map[string]bool{}
	for _, r := range Providers() {
		if kinds[r.Kind] {
			t.Errorf("provider kind %s registered twice", r.Kind)
		}
		kinds[r.Kind] = true
	}
	for _, k := range []string{"Fake", "Kubernetes"} {
		if !kinds[k] {
			t.Errorf("always-compiled provider %s missing", k)
		}
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

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
