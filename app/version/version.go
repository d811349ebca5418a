// Package version carries the build's identity, set with -ldflags -X.
package version

import "runtime"

var (
	// Version is the release version, e.g. v0.1.0.
	Version = "dev"
	// Commit is the source commit.
	Commit = "unknown"
)

// GoVersion is the Go release the binary was built with.
func GoVersion() string { return runtime.Version() }
