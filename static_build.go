//go:build cgo && !race && !eso_cgo

package main

// eso is one static binary. Go turns cgo on by default wherever it finds a
// C compiler and has no per-module switch for it, so this file, compiled
// only with cgo on, stops such a build with the message below instead of
// letting it link the C library. Race builds (go test -race) need cgo and
// pass; -tags eso_cgo lets a deliberate cgo build through.

// #error eso is a static binary: build it with CGO_ENABLED=0 (make build does), or set that once with: go env -w CGO_ENABLED=0
import "C"
