package node

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// PauseImage is the sandbox image containerd starts for every Pod, built
// from ./pause and imported before the kubelet starts: nothing is pulled.
const PauseImage = "eso.local/node/pause:1"

// BuildImage compiles the main package pkg (a Go import path or directory)
// as a static linux binary and writes a docker archive of a from-scratch
// image ref holding it (PackImage).
func BuildImage(ctx context.Context, pkg, ref, archive string) error {
	bin := archive + ".bin"
	defer os.Remove(bin)
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, pkg)
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %w: %s", pkg, err, out)
	}
	return PackImage(bin, ref, archive)
}

// PackImage writes a docker archive of a from-scratch image ref holding the
// static binary bin as /entrypoint, run as uid 65532.
func PackImage(bin, ref, archive string) error {
	content, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	if err := tw.WriteHeader(&tar.Header{Name: "entrypoint", Mode: 0o755, Size: int64(len(content)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(content); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar.Bytes())), nil
	})
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = runtime.GOARCH, "linux"
	cfg.Config = v1.Config{Entrypoint: []string{"/entrypoint"}, User: "65532:65532"}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(archive), 0o755); err != nil {
		return err
	}
	return tarball.WriteToFile(archive, tag, img)
}

func (c *Cluster) importPause(ctx context.Context) error {
	archive := c.path("images/pause.tar")
	if err := BuildImage(ctx, "github.com/eso-dev/eso/tests/node/pause", PauseImage, archive); err != nil {
		return err
	}
	return c.ImportImage(ctx, archive)
}
