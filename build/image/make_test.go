package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/eso-dev/eso/tests/testenv"
)

// runMake runs make in the repository with args and returns its output.
func runMake(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = testenv.RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func modTime(t *testing.T, path string) time.Time {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.ModTime()
}

// TestMakeImageIsIncremental: a second `make image` with nothing changed
// builds nothing and rewrites nothing; a changed image setting rewrites the
// image but does not rebuild the binary; a changed build flag rebuilds the
// binary.
func TestMakeImageIsIncremental(t *testing.T) {
	dir := t.TempDir()
	arch := runtime.GOARCH
	bin := filepath.Join(dir, "bin", "linux-"+arch, "eso")
	archive := filepath.Join(dir, "image", "eso-v0.0.0-make-minimal-linux-"+arch+".tar")
	args := []string{"image", "IMAGE_ARCHS=" + arch, "IMAGE_DIR=" + filepath.Join(dir, "image"), "BIN_DIR=" + filepath.Join(dir, "bin"),
		"VERSION=v0.0.0-make", "COMMIT=abc1234", "TAGS=minimal"} // no cloud SDK: the test is about make, not the binary
	const built, imaged = " build ", "./build/image"

	out := runMake(t, append(args, "SOURCE_DATE_EPOCH=1764000000")...)
	if !strings.Contains(out, built) || !strings.Contains(out, imaged) {
		t.Fatalf("the first make image built no binary or no image:\n%s", out)
	}
	binTime, archiveTime := modTime(t, bin), modTime(t, archive)

	out = runMake(t, append(args, "SOURCE_DATE_EPOCH=1764000000")...)
	if strings.Contains(out, built) || strings.Contains(out, imaged) {
		t.Errorf("make image with nothing changed built again:\n%s", out)
	}
	if !modTime(t, bin).Equal(binTime) || !modTime(t, archive).Equal(archiveTime) {
		t.Error("make image with nothing changed rewrote the binary or the archive")
	}

	out = runMake(t, append(args, "SOURCE_DATE_EPOCH=1764000001")...)
	if strings.Contains(out, built) || !strings.Contains(out, imaged) {
		t.Errorf("a new creation time should rewrite the image only:\n%s", out)
	}

	out = runMake(t, append(args, "SOURCE_DATE_EPOCH=1764000001", "COMMIT=def5678")...)
	if !strings.Contains(out, built) || !strings.Contains(out, imaged) {
		t.Errorf("a new commit should rebuild the binary and the image:\n%s", out)
	}
}

// TestMakeHelp: the help names versions, not the variables holding them.
func TestMakeHelp(t *testing.T) {
	out := runMake(t, "help")
	if strings.Contains(out, "$(") {
		t.Errorf("make help prints a variable unexpanded:\n%s", out)
	}
	if !strings.Contains(out, "Vault v") {
		t.Errorf("make help does not name Vault's version:\n%s", out)
	}
}

// TestMakeClean removes what the build writes, dist/ included.
func TestMakeClean(t *testing.T) {
	dir := t.TempDir()
	bin, dist := filepath.Join(dir, "bin"), filepath.Join(dir, "dist")
	for _, d := range []string{bin, filepath.Join(dist, "image")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "x"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runMake(t, "clean", "BIN_DIR="+bin, "DIST="+dist)
	for _, d := range []string{bin, dist} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("make clean left %s: %v", filepath.Base(d), err)
		}
	}
}
