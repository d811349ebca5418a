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
	// Digits only, as `git describe --always` gives for an abbreviated
	// commit that happens to have no letter: helm must take it as a string.
	const version = "9135154"
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
		checkSBOM(t, arch, readFile(t, files[root+"sbom/eso-"+version+"-linux-"+arch+".cdx.json"]))
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

	t.Run("the README's commands as written", func(t *testing.T) {
		runBundleREADME(t, filepath.Dir(files[root+"README.md"]), ref)
	})
}

// checkSBOM: an architecture's SBOM is CycloneDX, lists eso's modules,
// names that architecture in every purl (cyclonedx-gomod takes it from its
// environment, not from the binary) and carries the licences detected in
// the module cache.
func checkSBOM(t *testing.T, arch string, data []byte) {
	t.Helper()
	type component struct {
		Name     string `json:"name"`
		Purl     string `json:"purl"`
		Evidence struct {
			Licenses []struct {
				License struct {
					ID string `json:"id"`
				} `json:"license"`
			} `json:"licenses"`
		} `json:"evidence"`
	}
	var sbom struct {
		BOMFormat string `json:"bomFormat"`
		Metadata  struct {
			Component component `json:"component"`
		} `json:"metadata"`
		Components []component `json:"components"`
	}
	if err := json.Unmarshal(data, &sbom); err != nil {
		t.Fatalf("%s SBOM: %v", arch, err)
	}
	licensed := map[string]string{}
	for _, c := range append(sbom.Components, sbom.Metadata.Component) {
		if c.Purl != "" && !strings.Contains(c.Purl, "goarch="+arch+"&") {
			t.Errorf("%s SBOM: %s has purl %s", arch, c.Name, c.Purl)
		}
		if len(c.Evidence.Licenses) > 0 {
			licensed[c.Name] = c.Evidence.Licenses[0].License.ID
		}
	}
	if sbom.BOMFormat != "CycloneDX" || len(sbom.Components) < 20 {
		t.Errorf("%s SBOM: format %q, %d components", arch, sbom.BOMFormat, len(sbom.Components))
	}
	// Modules every build links, and in the module cache of any machine
	// that built eso.
	for name, id := range map[string]string{"sigs.k8s.io/controller-runtime": "Apache-2.0", "google.golang.org/grpc": "Apache-2.0", "go.uber.org/fx": "MIT"} {
		if licensed[name] != id {
			t.Errorf("%s SBOM: %s has licence %q, want %s", arch, name, licensed[name], id)
		}
	}
}

// runBundleREADME runs every sh block of the bundle's README in dir, word
// for word, with the commands that need a node stood in for: ctr and cp
// (into the k3s/RKE2 directories) check that the files they are given are
// exactly one existing file each; helm install renders with helm template
// (the same arguments; the test's API server already has eso's CRDs, which
// an install would refuse to adopt) and kubectl applies with
// --dry-run=server (forcing conflicts with what the harness installed)
// against the test's API server. A glob matching two
// files, a wrong name or a chart that does not render fails the command
// and so the test.
func runBundleREADME(t *testing.T, dir, image string) {
	readme := string(readFile(t, filepath.Join(dir, "README.md")))
	var blocks []string
	inBlock := false
	var block []string
	for _, line := range strings.Split(readme, "\n") {
		switch {
		case !inBlock && line == "```sh":
			inBlock, block = true, nil
		case inBlock && line == "```":
			inBlock = false
			blocks = append(blocks, strings.Join(block, "\n"))
		case inBlock:
			block = append(block, line)
		}
	}
	if len(blocks) < 3 {
		t.Fatalf("the bundle README has %d sh blocks", len(blocks))
	}
	kubectlBin := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	stubs, state := t.TempDir(), t.TempDir()
	log := filepath.Join(state, "commands")
	for name, script := range map[string]string{
		"ctr": `[ $# -eq 5 ] && [ "$1 $2 $3 $4" = "-n k8s.io images import" ] || { echo "ctr: unexpected arguments: $*" >&2; exit 2; }
[ -f "$5" ] || { echo "ctr: no file $5" >&2; exit 1; }`,
		"cp": `[ $# -eq 2 ] || { echo "cp: want one file and a directory, got: $*" >&2; exit 2; }
[ -f "$1" ] || { echo "cp: no file $1" >&2; exit 1; }
case "$2" in /var/lib/rancher/k3s/*/ | /var/lib/rancher/rke2/*/) ;; *) echo "cp: unexpected destination $2" >&2; exit 2;; esac`,
		"helm": `[ "$1" = install ] || { echo "helm: unexpected command $1" >&2; exit 2; }
shift
"$REAL_HELM" template "$@" > "$STUB_STATE/helm-install.yaml"`,
		// --force-conflicts: the objects the test harness installed as the
		// chart (ClusterRoleBinding eso, ...) are another field manager's;
		// a fresh cluster has none.
		"kubectl": `exec "$REAL_KUBECTL" "$@" --dry-run=server --force-conflicts`,
	} {
		stub := "#!/bin/sh\necho \"" + name + " $*\" >> \"$STUB_STATE/commands\"\n" + script + "\n"
		if err := os.WriteFile(filepath.Join(stubs, name), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	helmHome := t.TempDir()
	for _, script := range blocks {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+stubs+":"+os.Getenv("PATH"), "STUB_STATE="+state,
			"REAL_HELM="+os.Getenv("HELM_BIN"), "REAL_KUBECTL="+kubectlBin, "KUBECONFIG="+writeKubeconfig(t, state, env.Config),
			"HELM_CACHE_HOME="+helmHome+"/cache", "HELM_CONFIG_HOME="+helmHome+"/config", "HELM_DATA_HOME="+helmHome+"/data")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("the bundle README's\n%s\nfails: %v\n%s", script, err, out)
		}
	}
	ran := string(readFile(t, log))
	for _, want := range []string{"ctr -n k8s.io images import images/", "helm install ", "cp images/", "kubectl apply "} {
		if !strings.Contains(ran, want) {
			t.Errorf("the README never ran %q; it ran:\n%s", want, ran)
		}
	}
	rendered := string(readFile(t, filepath.Join(state, "helm-install.yaml")))
	if !strings.Contains(rendered, "image: "+image+"\n") || !strings.Contains(rendered, "imagePullPolicy: Never") {
		t.Errorf("the README's helm install does not run %s without pulling", image)
	}
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
