package integration

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/eso-dev/eso/tests/testenv"
)

// TestBundle builds the air-gapped bundle as `make bundle` does and checks
// it as a user would: every checksum verifies and covers every file; the
// install file is exactly what `make manifests` renders with
// image.airgapped=true and the API server
// accepts it; both architectures' images carry the reference images.txt
// and the charts use; the charts and SBOMs are there.
func TestBundle(t *testing.T) {
	const version = "v0.0.0-bundle-test"
	ns := env.Namespace(t, "bundle", nil)
	dist := t.TempDir()
	build := exec.Command("make", "--no-print-directory", "bundle", "DIST="+dist, "VERSION="+version, "MANIFEST_NAMESPACE="+ns)
	build.Dir = testenv.RepoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make bundle: %v\n%s", err, out)
	}
	bundle := filepath.Join(dist, "eso-"+version+"-bundle.tar.gz")
	info, err := os.Stat(bundle)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bundle: %.1f MiB", float64(info.Size())/(1<<20))

	files := untar(t, bundle, t.TempDir())
	root := "eso-" + version + "-bundle/"
	sums, ok := files[root+"SHA256SUMS"]
	if !ok {
		t.Fatalf("no SHA256SUMS in %v", keysOf(files))
	}
	listed := map[string]bool{}
	scanner := bufio.NewScanner(strings.NewReader(string(readFile(t, sums))))
	for scanner.Scan() {
		sum, file, ok := strings.Cut(scanner.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", scanner.Text())
		}
		listed[file] = true
		got := sha256.Sum256(readFile(t, files[root+file]))
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: checksum does not verify", file)
		}
	}
	for path := range files {
		if rel := strings.TrimPrefix(path, root); rel != "SHA256SUMS" && !listed[rel] {
			t.Errorf("%s is not in SHA256SUMS", rel)
		}
	}

	ref := "ghcr.io/eso-dev/eso:" + version
	if got := strings.TrimSpace(string(readFile(t, files[root+"images.txt"]))); got != ref {
		t.Errorf("images.txt = %q, want %q", got, ref)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		path := files[root+"images/eso-"+version+"-linux-"+arch+".tar"]
		img, err := tarball.ImageFromPath(path, &tag)
		if err != nil {
			t.Fatalf("%s archive does not hold %s: %v", arch, ref, err)
		}
		if cfg, err := img.ConfigFile(); err != nil || cfg.Architecture != arch {
			t.Errorf("%s archive: %v, %v", arch, cfg, err)
		}
		var sbom struct {
			BOMFormat  string `json:"bomFormat"`
			Components []struct {
				Name string `json:"name"`
			} `json:"components"`
		}
		if err := json.Unmarshal(readFile(t, files[root+"sbom/eso-"+version+"-linux-"+arch+".cdx.json"]), &sbom); err != nil {
			t.Fatalf("%s SBOM: %v", arch, err)
		}
		found := false
		for _, c := range sbom.Components {
			found = found || c.Name == "sigs.k8s.io/controller-runtime"
		}
		if sbom.BOMFormat != "CycloneDX" || !found {
			t.Errorf("%s SBOM: format %q, %d components, controller-runtime listed: %v", arch, sbom.BOMFormat, len(sbom.Components), found)
		}
	}
	for _, chart := range []string{"charts/eso-0.1.0.tgz", "charts/eso-provider-0.1.0.tgz"} {
		if _, ok := files[root+chart]; !ok {
			t.Errorf("no %s in the bundle", chart)
		}
	}

	install := readFile(t, files[root+"eso-"+version+"-install.yaml"])
	render := exec.Command(filepath.Join(testenv.RepoRoot(), "build", "manifests.sh"), os.Getenv("HELM_BIN"), "ghcr.io/eso-dev/eso", version, ns, "--set", "image.airgapped=true")
	exported, err := render.Output()
	if err != nil {
		t.Fatalf("build/manifests.sh: %v", err)
	}
	if string(install) != string(exported) {
		t.Error("the bundle's install file differs from what make manifests renders with image.airgapped=true")
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(install)), 4096)
	var objs []*unstructured.Unstructured
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if obj != nil {
			objs = append(objs, &unstructured.Unstructured{Object: obj})
		}
	}
	if objs[0].GetKind() != "Namespace" || objs[0].GetName() != ns {
		t.Errorf("the install file starts with %s %s, want its Namespace", objs[0].GetKind(), objs[0].GetName())
	}
	dryRun(t, objs)
}

// untar extracts a .tar.gz into dir and returns its regular files by name.
func untar(t *testing.T, path, dir string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if !filepath.IsLocal(h.Name) {
			t.Fatalf("bundle entry %q leaves its directory", h.Name)
		}
		out := filepath.Join(dir, h.Name)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
		files[h.Name] = out
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func keysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
