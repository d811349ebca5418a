package apis_test

import (
	"os"
	"path/filepath"
	"testing"

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
