package apis_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/eso-dev/eso/tests/testenv"
)

// kubectlApplyLimit is the size past which `kubectl apply` fails: the
// last-applied-configuration annotation must fit in 256 KiB.
const kubectlApplyLimit = 256 * 1024

func TestEveryCRDFitsKubectlApply(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.CRDDir(), "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found %d CRDs in %s, want at least 5", len(files), testenv.CRDDir())
	}
	for _, f := range files {
		info, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() >= kubectlApplyLimit {
			t.Errorf("%s is %d bytes, over the %d byte kubectl apply limit", filepath.Base(f), info.Size(), kubectlApplyLimit)
		}
	}
}

// TestTimesInTheFutureAreColumnsOfTypeString: kubectl prints a date column
// as an age, and an age of a time still to come as <invalid>. A column of
// a deadline or a next-run time must be a string.
func TestTimesInTheFutureAreColumnsOfTypeString(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.CRDDir(), "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			t.Fatal(err)
		}
		for _, v := range crd.Spec.Versions {
			for _, c := range v.AdditionalPrinterColumns {
				if c.Type == "date" && strings.Contains(strings.ToLower(c.Name), "deadline") {
					t.Errorf("%s %s: column %s is a date: a future deadline would print as <invalid>", crd.Name, v.Name, c.Name)
				}
			}
		}
	}
}

// TestStoreListingNames: the names the README gives for listing stores. The
// category lists both store APIs; eso's own stores have short names of
// their own, so `ss` and `css` keep upstream's meaning (the v1 kinds)
// without kubectl warning that they are ambiguous.
func TestStoreListingNames(t *testing.T) {
	want := map[string][]string{
		"secretstore.external-secrets.io_secretstores.yaml":        {"ssv2"},
		"secretstore.external-secrets.io_clustersecretstores.yaml": {"cssv2"},
		"external-secrets.io_secretstores.yaml":                    {"ss"},
		"external-secrets.io_clustersecretstores.yaml":             {"css"},
	}
	shortNames := map[string]string{}
	files, err := filepath.Glob(filepath.Join(testenv.CRDDir(), "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			t.Fatal(err)
		}
		for _, s := range crd.Spec.Names.ShortNames {
			if other, ok := shortNames[s]; ok {
				t.Errorf("short name %q is both %s's and %s's: kubectl would warn and pick one", s, other, crd.Name)
			}
			shortNames[s] = crd.Name
		}
		names, isStore := want[filepath.Base(f)]
		if !isStore {
			if slices.Contains(crd.Spec.Names.Categories, "external-secrets-stores") {
				t.Errorf("%s is in category external-secrets-stores but is no store", crd.Name)
			}
			continue
		}
		if !slices.Contains(crd.Spec.Names.Categories, "external-secrets-stores") {
			t.Errorf("%s categories %v: want external-secrets-stores", crd.Name, crd.Spec.Names.Categories)
		}
		if !slices.Equal(crd.Spec.Names.ShortNames, names) {
			t.Errorf("%s short names %v, want %v", crd.Name, crd.Spec.Names.ShortNames, names)
		}
		delete(want, filepath.Base(f))
	}
	for f := range want {
		t.Errorf("no CRD %s", f)
	}
}
