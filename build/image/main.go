// Command image writes eso's container image without a docker engine or a
// registry: a from-scratch image holding the static binary and an
// /etc/passwd entry for the non-root user it runs as, nothing else (CA
// roots are embedded in the binary). It writes an OCI layout with one
// image per architecture under one index, and per architecture a
// docker-archive tarball (what `docker load`, `ctr images import`,
// `kind load image-archive` and k3s's airgap images directory take).
//
// The same binaries, version and creation time give the same digests: the
// layers are written with fixed owners, modes and times.
//
//	go run ./build/image -out dist/image -version v0.1.0 -commit abc123 \
//	    -created 1764000000 -binary amd64=bin/linux-amd64/eso -binary arm64=bin/linux-arm64/eso
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The user eso runs as: the uid distroless and most charts call nonroot.
const (
	uid        = 65532
	binaryPath = "usr/local/bin/eso"
)

// Spec is what an image is built from.
type Spec struct {
	// Repository and Tag name the image, e.g. ghcr.io/eso-dev/eso and v0.1.0.
	Repository, Tag string
	Version         string
	Commit          string
	// Tags are the build tags the binaries were built with ("" for all).
	Tags string
	// Created is the image's creation time: the commit's, so that two
	// builds of a commit are identical.
	Created time.Time
	// Binaries maps an architecture (amd64, arm64) to its eso binary.
	Binaries map[string]string
}

// Result names what Build wrote.
type Result struct {
	// Index is the digest of the OCI image index.
	Index v1.Hash
	// Layout is the OCI layout's directory.
	Layout string
	// Images maps an architecture to its image's digest.
	Images map[string]v1.Hash
	// Archives maps an architecture to its docker-archive tarball.
	Archives map[string]string
}

// Build writes the OCI layout to out/eso-<tag>-oci and the docker archives
// to out/eso-<tag>-linux-<arch>.tar.
func Build(spec Spec, out string) (*Result, error) {
	ref, err := name.NewTag(spec.Repository + ":" + spec.Tag)
	if err != nil {
		return nil, err
	}
	base, err := layer(baseFiles(), spec.Created)
	if err != nil {
		return nil, err
	}
	ociDir := filepath.Join(out, "eso-"+spec.Tag+"-oci")
	if err := os.RemoveAll(ociDir); err != nil {
		return nil, err
	}
	res := &Result{Images: map[string]v1.Hash{}, Archives: map[string]string{}}
	index := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	archs := make([]string, 0, len(spec.Binaries))
	for arch := range spec.Binaries {
		archs = append(archs, arch)
	}
	slices.Sort(archs)
	for _, arch := range archs {
		img, err := image(spec, arch, base)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", arch, err)
		}
		digest, err := img.Digest()
		if err != nil {
			return nil, err
		}
		res.Images[arch] = digest
		index = mutate.AppendManifests(index, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: "linux", Architecture: arch},
		}})
		archive := filepath.Join(out, fmt.Sprintf("eso-%s-linux-%s.tar", spec.Tag, arch))
		if err := tarball.WriteToFile(archive, ref, img); err != nil {
			return nil, fmt.Errorf("writing %s: %w", archive, err)
		}
		res.Archives[arch] = archive
	}
	res.Layout = ociDir
	if res.Index, err = index.Digest(); err != nil {
		return nil, err
	}
	p, err := layout.Write(ociDir, empty.Index)
	if err != nil {
		return nil, err
	}
	// The image-layout spec's ref.name is the tag alone, not the
	// repository: `skopeo copy oci:<dir>:<tag>` and `oras` look it up so.
	if err := p.AppendIndex(index, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": spec.Tag,
	})); err != nil {
		return nil, err
	}
	return res, nil
}

// image is the image of one architecture: the shared base layer, then the
// binary.
func image(spec Spec, arch string, base v1.Layer) (v1.Image, error) {
	bin, err := os.ReadFile(spec.Binaries[arch])
	if err != nil {
		return nil, err
	}
	binLayer, err := layer([]file{{name: binaryPath, mode: 0o755, data: bin}}, spec.Created)
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1),
		mutate.Addendum{Layer: base, History: v1.History{Created: v1.Time{Time: spec.Created}, CreatedBy: "eso: /etc/passwd, /etc/group, /tmp"}},
		mutate.Addendum{Layer: binLayer, History: v1.History{Created: v1.Time{Time: spec.Created}, CreatedBy: "eso: " + binaryPath}})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Created = "linux", arch, v1.Time{Time: spec.Created}
	cfg.Config.Entrypoint = []string{"/" + binaryPath}
	cfg.Config.Cmd = nil
	cfg.Config.User = fmt.Sprintf("%d:%d", uid, uid)
	cfg.Config.WorkingDir = "/"
	cfg.Config.Env = []string{"PATH=/usr/local/bin"}
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":    "eso",
		"org.opencontainers.image.version":  spec.Version,
		"org.opencontainers.image.revision": spec.Commit,
		"org.opencontainers.image.source":   "https://github.com/eso-dev/eso",
		"org.opencontainers.image.licenses": "Apache-2.0",
		"dev.eso.build-tags":                tagsLabel(spec.Tags),
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, err
	}
	return mutate.ConfigMediaType(img, types.OCIConfigJSON), nil
}

func tagsLabel(tags string) string {
	if tags == "" {
		return "all"
	}
	return tags
}

type file struct {
	name string
	mode int64
	// owner is the uid and gid the entry belongs to (0: root).
	owner int
	dir   bool
	data  []byte
}

// baseFiles is what the binary needs from a filesystem: a passwd and group
// entry for its user (so tools that resolve the uid find it) and /tmp.
func baseFiles() []file {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", uid, uid)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", uid)
	return []file{
		{name: "etc", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "home", mode: 0o755, dir: true},
		// The user's home is its own, as in distroless: tools that write
		// there (a debug shell, ~/.cache) must not fail on a root-owned 0700.
		{name: "home/nonroot", mode: 0o700, owner: uid, dir: true},
		{name: "tmp", mode: 0o1777, dir: true},
	}
}

// layer is a tar of files with fixed owners and modification time, so the
// same files always give the same digest.
func layer(files []file, modTime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, f := range files {
		// Parent directories first, as tar extractors expect.
		parts := strings.Split(f.name, "/")
		for i := 1; i < len(parts); i++ {
			dir := strings.Join(parts[:i], "/")
			if dirs[dir] {
				continue
			}
			dirs[dir] = true
			if !slices.ContainsFunc(files, func(g file) bool { return g.dir && g.name == dir }) {
				if err := tw.WriteHeader(header(dir+"/", 0o755, 0, tar.TypeDir, 0, modTime)); err != nil {
					return nil, err
				}
			}
		}
		if f.dir {
			dirs[f.name] = true
			if err := tw.WriteHeader(header(f.name+"/", f.mode, f.owner, tar.TypeDir, 0, modTime)); err != nil {
				return nil, err
			}
			continue
		}
		if err := tw.WriteHeader(header(f.name, f.mode, f.owner, tar.TypeReg, int64(len(f.data)), modTime)); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}

func header(name string, mode int64, owner int, typ byte, size int64, modTime time.Time) *tar.Header {
	return &tar.Header{Name: name, Mode: mode, Uid: owner, Gid: owner, Typeflag: typ, Size: size, ModTime: modTime.UTC(), Format: tar.FormatUSTAR}
}

type binaries map[string]string

func (b binaries) String() string { return fmt.Sprint(map[string]string(b)) }
func (b binaries) Set(v string) error {
	arch, path, ok := strings.Cut(v, "=")
	if !ok || arch == "" || path == "" {
		return errors.New("want arch=path, e.g. amd64=bin/linux-amd64/eso")
	}
	b[arch] = path
	return nil
}

func main() {
	spec := Spec{Binaries: map[string]string{}}
	var created int64
	out := flag.String("out", "dist/image", "directory to write the OCI layout and archives to")
	flag.StringVar(&spec.Repository, "repository", "ghcr.io/eso-dev/eso", "image repository")
	flag.StringVar(&spec.Tag, "tag", "", "image tag (default: the version)")
	flag.StringVar(&spec.Version, "version", "dev", "eso's version, for the labels")
	flag.StringVar(&spec.Commit, "commit", "unknown", "source commit, for the labels")
	flag.StringVar(&spec.Tags, "tags", "", "build tags the binaries were built with")
	flag.Int64Var(&created, "created", 0, "creation time, Unix seconds (the commit's time)")
	flag.Var(binaries(spec.Binaries), "binary", "arch=path of a linux binary; repeat per architecture")
	flag.Parse()
	if spec.Tag == "" {
		spec.Tag = spec.Version
	}
	if len(spec.Binaries) == 0 {
		fmt.Fprintln(os.Stderr, "image: no -binary given")
		os.Exit(2)
	}
	spec.Created = time.Unix(created, 0).UTC()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	res, err := Build(spec, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	report(os.Stdout, spec, res)
}

// report prints what Build wrote, the architectures in order, so that two
// runs print the same lines.
func report(w io.Writer, spec Spec, res *Result) {
	fmt.Fprintf(w, "%s:%s index %s (OCI layout %s)\n", spec.Repository, spec.Tag, res.Index, res.Layout)
	for _, arch := range slices.Sorted(maps.Keys(res.Images)) {
		fmt.Fprintf(w, "  linux/%s %s %s\n", arch, res.Images[arch], res.Archives[arch])
	}
}
