// Package version carries the build's identity: set with -ldflags -X by
// make build and the image, else read from what the Go toolchain records
// in every binary (the module version of `go install ...@v1.2.3`, the VCS
// revision of a plain `go build` in a checkout).
package version

import (
	"runtime"
	"runtime/debug"
)

var (
	// Version is the release version, e.g. v0.1.0.
	Version = "dev"
	// Commit is the source commit.
	Commit = "unknown"
)

// GoVersion is the Go release the binary was built with.
func GoVersion() string { return runtime.Version() }

func init() {
	if info, ok := debug.ReadBuildInfo(); ok {
		Version, Commit = fromBuildInfo(info, Version, Commit)
	}
}

// fromBuildInfo fills what ldflags left at its default from info.
func fromBuildInfo(info *debug.BuildInfo, version, commit string) (string, string) {
	if version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		version = info.Main.Version
	}
	if commit == "unknown" {
		revision, modified := "", false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if revision != "" {
			commit = revision
			if modified {
				commit += "-dirty"
			}
		}
	}
	return version, commit
}
