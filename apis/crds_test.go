package apis_test

import (
	"os"
	"path/filepath"
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
