package apis_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/eso-dev/eso/tests/testenv"
)

// TestEveryReasonIsDocumented: every condition reason the API declares
// (a constant named Reason...) is in the README's table of reasons.
func TestEveryReasonIsDocumented(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "apis", "*", "*", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(parsed, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range spec.Names {
				if !strings.HasPrefix(name.Name, "Reason") || i >= len(spec.Values) {
					continue
				}
				lit, ok := spec.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				reason, _ := strconv.Unquote(lit.Value)
				found++
				if !strings.Contains(string(readme), "`"+reason+"`") {
					t.Errorf("%s (%s, %s) is not in the README's table of condition reasons", reason, name.Name, filepath.Base(f))
				}
			}
			return true
		})
	}
	if found < 20 {
		t.Fatalf("found %d reasons: the test no longer sees the API's constants", found)
	}
}
