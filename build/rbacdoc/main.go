// Command rbacdoc writes the permission tables of README.md from the roles
// controller-gen generates from eso's RBAC markers (make generate runs it),
// so the README lists exactly what the charts grant.
package main

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// tables are the README's generated sections: a marker name and the role
// file whose rules it lists.
var tables = []struct{ marker, role string }{
	{"rbac-core", "charts/eso/files/rbac/role.yaml"},
	{"rbac-provider", "charts/eso-provider/files/rbac/role.yaml"},
}

func main() {
	if err := run("README.md"); err != nil {
		fmt.Fprintln(os.Stderr, "rbacdoc:", err)
		os.Exit(1)
	}
}

func run(readme string) error {
	doc, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	for _, t := range tables {
		table, err := render(t.role)
		if err != nil {
			return err
		}
		if doc, err = replace(doc, t.marker, table); err != nil {
			return err
		}
	}
	return os.WriteFile(readme, doc, 0o644)
}

// render is a Markdown table of the rules of the ClusterRole(s) in file.
func render(file string) (string, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| API group | resources | verbs |\n|---|---|---|\n")
	for _, doc := range bytes.Split(raw, []byte("\n---\n")) {
		var role rbacv1.ClusterRole
		if err := yaml.Unmarshal(doc, &role); err != nil {
			return "", fmt.Errorf("%s: %w", file, err)
		}
		for _, r := range role.Rules {
			groups := slices.Clone(r.APIGroups)
			for i, g := range groups {
				if g == "" {
					groups[i] = "core"
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.Join(groups, ", "), code(r.Resources), strings.Join(r.Verbs, ", "))
		}
	}
	return b.String(), nil
}

func code(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = "`" + s + "`"
	}
	return strings.Join(out, ", ")
}

// replace puts table between the <!-- marker:begin --> and
// <!-- marker:end --> lines of doc.
func replace(doc []byte, marker, table string) ([]byte, error) {
	begin, end := "<!-- "+marker+":begin -->\n", "<!-- "+marker+":end -->"
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		return nil, fmt.Errorf("README.md lacks the %s markers", marker)
	}
	var out bytes.Buffer
	out.Write(doc[:i+len(begin)])
	out.WriteString(table)
	out.Write(doc[j:])
	return out.Bytes(), nil
}
