// Package scaffold checks that adding an in-tree provider is what the
// catalog says it is: its folder, its configuration type, one catalog line
// and `make generate`. It does that in a copy of the tree and looks at what
// follows: the provider is compiled in and listed, both roles grant its
// kind, and the catalog's own tests pass.
package scaffold

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const scratchTypes = `package v2alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ScratchSpec is the configuration of a provider made up by a test.
type ScratchSpec struct {
	// Greeting is what every secret reads.
	// +kubebuilder:validation:MaxLength=64
	Greeting string ` + "`json:\"greeting\"`" + `
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-providers}

// Scratch is a provider configuration made up by a test.
type Scratch struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `

	Spec ScratchSpec ` + "`json:\"spec,omitempty\"`" + `
}

// +kubebuilder:object:root=true

// ScratchList is a list of Scratch.
type ScratchList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `
	Items           []Scratch ` + "`json:\"items\"`" + `
}

func init() {
	SchemeBuilder.Register(&Scratch{}, &ScratchList{})
}
`

const scratchProvider = `// Package scratch is a provider made up by a test: every secret reads the
// configuration's greeting.
package scratch

import (
	"context"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// Registration describes the provider to the registry.
var Registration = plugin.Definition[*provv1.Scratch]{
	Name: "scratch",
	Kind: "Scratch",
	NewClient: func(_ context.Context, _ plugin.Deps, cfg *provv1.Scratch, _ plugin.Scope) (plugin.SecretsClient, error) {
		c := &client{greeting: []byte(cfg.Spec.Greeting)}
		c.JSONValues = kit.JSONValues{Value: c.value}
		return c, nil
	},
}.Registration()

type client struct {
	kit.JSONValues
	greeting []byte
}

func (c *client) value(context.Context, string, string) ([]byte, error) { return c.greeting, nil }

func (c *client) GetAllSecrets(context.Context, esv1.ExternalSecretFind) (map[string][]byte, error) {
	return nil, plugin.ErrNotSupported
}

func (c *client) Capabilities() plugin.Capabilities { return plugin.ReadOnly }

func (c *client) Close(context.Context) error { return nil }
`

// TestAddingAProviderIsItsFolderItsTypeAndOneCatalogLine adds the scratch
// provider to a copy of the tree the way the catalog's comment says, runs
// make generate there, and checks it is wired, permitted and listed.
func TestAddingAProviderIsItsFolderItsTypeAndOneCatalogLine(t *testing.T) {
	if testing.Short() {
		t.Skip("copies the tree and runs make generate")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tree := copyTree(t, root)

	write(t, filepath.Join(tree, "apis/providers/v2alpha1/scratch_types.go"), scratchTypes)
	write(t, filepath.Join(tree, "providers/scratch/scratch.go"), scratchProvider)
	catalogFile := filepath.Join(tree, "providers/catalog/catalog.go")
	src, err := os.ReadFile(catalogFile)
	if err != nil {
		t.Fatal(err)
	}
	fakeLine := `	{Package: "providers/fake", Kind: "Fake"},` + "\n"
	if !strings.Contains(string(src), fakeLine) {
		t.Fatalf("the catalog no longer lists the Fake provider as %q", fakeLine)
	}
	write(t, catalogFile, strings.Replace(string(src), fakeLine, fakeLine+`	{Package: "providers/scratch", Kind: "Scratch"},`+"\n", 1))

	run(t, tree, "make", "generate")

	// Wired and listed: the binary lists it among its providers.
	out := run(t, tree, "go", "run", ".", "providers")
	if !strings.Contains(out, "Scratch.provider.secretstore.external-secrets.io") {
		t.Errorf("eso providers does not list the scratch provider:\n%s", out)
	}
	// Permitted: both ClusterRoles grant it, and the CRD is there.
	for _, role := range []string{"charts/eso/files/rbac/role.yaml", "charts/eso-provider/files/rbac/role.yaml"} {
		data, err := os.ReadFile(filepath.Join(tree, role))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "- scratches\n") {
			t.Errorf("%s does not grant scratches", role)
		}
	}
	if _, err := os.Stat(filepath.Join(tree, "charts/eso/files/crds/provider.secretstore.external-secrets.io_scratches.yaml")); err != nil {
		t.Errorf("the chart has no CRD for Scratch: %v", err)
	}
	// And the catalog's own tests (compiled-in kinds, RBAC, migrate) pass.
	run(t, tree, "go", "test", "-count=1", "./app/wiring/")
}

// copyTree copies the files git tracks (and those not yet committed but
// not ignored) into a temporary directory.
func copyTree(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	tree := t.TempDir()
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		data, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(tree, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, f), data, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return tree
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
