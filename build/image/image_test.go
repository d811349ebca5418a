package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/eso-dev/eso/tests/testenv"
)

// buildEso builds eso for linux/arch as `make image` does: static, trimmed
// paths, no build ID.
func buildEso(t *testing.T, arch, version string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "eso")
	cmd := exec.Command("go", "build", "-trimpath",
		"-ldflags", "-s -w -buildid= -X github.com/eso-dev/eso/app/version.Version="+version, "-o", out, ".")
	cmd.Dir = testenv.RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building eso for %s: %v\n%s", arch, err, msg)
	}
	return out
}

func sha(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

// files lists an image's flattened filesystem: name → header, and the
// contents of its regular files.
func files(t *testing.T, img v1.Image) (map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	headers, contents := map[string]*tar.Header{}, map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return headers, contents
		}
		if err != nil {
			t.Fatal(err)
		}
		headers[h.Name] = h
		if h.Typeflag == tar.TypeReg {
			if contents[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestImage builds eso's image for both architectures twice, as `make
// image` does, and checks what a cluster will run: the same digests both
// times, one image per architecture under the OCI index, nothing in the
// filesystem but the binary and the user entry, a non-root user and eso
// as entrypoint, the right binary for each architecture, and an amd64
// binary that runs.
func TestImage(t *testing.T) {
	const version = "v0.0.0-test"
	spec := Spec{Repository: "ghcr.io/eso-dev/eso", Tag: version, Version: version, Commit: "abc1234",
		Created: time.Unix(1764000000, 0).UTC(), Binaries: map[string]string{}}
	for _, arch := range []string{"amd64", "arm64"} {
		spec.Binaries[arch] = buildEso(t, arch, version)
	}
	first, err := Build(spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	second, err := Build(spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if first.Index != second.Index {
		t.Errorf("two builds gave index digests %s and %s", first.Index, second.Index)
	}
	for arch := range spec.Binaries {
		if sha(t, first.Archives[arch]) != sha(t, second.Archives[arch]) {
			t.Errorf("%s: the docker archives of two builds differ", arch)
		}
	}

	index, err := layout.ImageIndexFromPath(first.Layout)
	if err != nil {
		t.Fatal(err)
	}
	outer, err := index.IndexManifest()
	if err != nil || len(outer.Manifests) != 1 {
		t.Fatalf("OCI layout index: %+v, %v; want one image index", outer, err)
	}
	// The layout spec's ref.name is the tag alone: `skopeo copy
	// oci:<dir>:<tag>` finds the image by it.
	if ref := outer.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; ref != version {
		t.Errorf("OCI layout names the image %q, want the tag %q", ref, version)
	}
	images, err := index.ImageIndex(outer.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := images.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, m := range manifest.Manifests {
		platforms = append(platforms, m.Platform.OS+"/"+m.Platform.Architecture)
		if m.Digest != first.Images[m.Platform.Architecture] {
			t.Errorf("%s: the index names %s, the archive holds %s", m.Platform.Architecture, m.Digest, first.Images[m.Platform.Architecture])
		}
	}
	if slices.Sort(platforms); !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("platforms %v", platforms)
	}

	machines := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	for arch, machine := range machines {
		img, err := tarball.ImageFromPath(first.Archives[arch], nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.OS != "linux" || cfg.Architecture != arch || cfg.Config.User != "65532:65532" ||
			!slices.Equal(cfg.Config.Entrypoint, []string{"/usr/local/bin/eso"}) {
			t.Errorf("%s config: os %s arch %s user %q entrypoint %v", arch, cfg.OS, cfg.Architecture, cfg.Config.User, cfg.Config.Entrypoint)
		}
		if cfg.Config.Labels["org.opencontainers.image.version"] != version || cfg.Config.Labels["org.opencontainers.image.revision"] != "abc1234" {
			t.Errorf("%s labels %v", arch, cfg.Config.Labels)
		}
		if !cfg.Created.Time.Equal(spec.Created) {
			t.Errorf("%s created %s, want the commit's time", arch, cfg.Created)
		}
		fs, contents := files(t, img)
		bin := contents[binaryPath]
		if !strings.Contains(string(contents["etc/passwd"]), "nonroot:x:65532:65532:") {
			t.Errorf("%s /etc/passwd has no entry for uid 65532: %q", arch, contents["etc/passwd"])
		}
		var names []string
		for name := range fs {
			names = append(names, strings.TrimSuffix(name, "/"))
		}
		slices.Sort(names)
		want := []string{"etc", "etc/group", "etc/passwd", "home", "home/nonroot", "tmp", "usr", "usr/local", "usr/local/bin", "usr/local/bin/eso"}
		if !slices.Equal(names, want) {
			t.Errorf("%s filesystem %v, want %v", arch, names, want)
		}
		if h := fs[binaryPath]; h == nil || h.Mode != 0o755 || h.Uid != 0 {
			t.Errorf("%s binary header %+v", arch, h)
		}
		// The user's home is its own, the rest root's.
		home := fs["home/nonroot/"]
		if home == nil {
			home = fs["home/nonroot"]
		}
		if h := home; h == nil || h.Uid != 65532 || h.Gid != 65532 || h.Mode != 0o700 {
			t.Errorf("%s /home/nonroot header %+v, want uid and gid 65532, mode 0700", arch, h)
		}
		if h := fs["etc/passwd"]; h == nil || h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s /etc/passwd header %+v, want root's", arch, h)
		}
		f, err := elf.NewFile(bytes.NewReader(bin))
		if err != nil {
			t.Fatalf("%s: the binary is no ELF file: %v", arch, err)
		}
		if f.Machine != machine {
			t.Errorf("%s image holds a %s binary", arch, f.Machine)
		}
		if arch == runtime.GOARCH && runtime.GOOS == "linux" {
			path := filepath.Join(t.TempDir(), "eso")
			if err := os.WriteFile(path, bin, 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(path, "--version").CombinedOutput()
			if err != nil || !strings.Contains(string(out), version) {
				t.Errorf("the %s binary from the image: eso --version = %q, %v", arch, out, err)
			}
		}
	}
}

// TestReportOrder: what `make image` prints names the architectures in the
// same order every run.
func TestReportOrder(t *testing.T) {
	res := &Result{Images: map[string]v1.Hash{}, Archives: map[string]string{}}
	archs := []string{"s390x", "amd64", "ppc64le", "arm64", "riscv64", "386", "arm"}
	for _, arch := range archs {
		res.Images[arch] = v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}
		res.Archives[arch] = "eso-v1-linux-" + arch + ".tar"
	}
	var first string
	for i := range 20 {
		var out bytes.Buffer
		report(&out, Spec{Repository: "r", Tag: "v1"}, res)
		if i == 0 {
			first = out.String()
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(first), "\n")[1:] {
				got = append(got, strings.TrimPrefix(strings.Fields(line)[0], "linux/"))
			}
			if !slices.IsSorted(got) || len(got) != len(archs) {
				t.Fatalf("architectures printed as %v, want sorted", got)
			}
		} else if out.String() != first {
			t.Fatalf("two reports differ:\n%s\n%s", first, out.String())
		}
	}
}
