package logging

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
)

// TestDemoteReconcileErrors: the per-retry line goes to debug, every other
// error stays an error.
func TestDemoteReconcileErrors(t *testing.T) {
	var lines []string
	base := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 0})
	l := DemoteReconcileErrors(base).WithName("externalsecret").WithValues("controller", "externalsecret")
	l.Error(errors.New("provider unavailable"), "Reconciler error")
	if len(lines) != 0 {
		t.Fatalf("a reconcile error was logged at the default level: %v", lines)
	}
	l.Error(errors.New("boom"), "gRPC server stopped")
	if len(lines) != 1 || !strings.Contains(lines[0], "boom") {
		t.Fatalf("another error was not logged: %v", lines)
	}
	lines = nil
	debug := DemoteReconcileErrors(funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1}))
	debug.Error(errors.New("provider unavailable"), "Reconciler error")
	if len(lines) != 1 || !strings.Contains(lines[0], "provider unavailable") {
		t.Fatalf("at debug the reconcile error is gone: %v", lines)
	}
}

// TestWarn: a warning goes through the process's warning level when there
// is one, else it is an info line marked WARNING.
func TestWarn(t *testing.T) {
	var lines []string
	l := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})
	Warn(l, "plaintext")
	if len(lines) != 1 || !strings.Contains(lines[0], "WARNING: plaintext") {
		t.Fatalf("without a warner: %v", lines)
	}
	var warned []string
	SetWarner(func(msg string, _ ...any) { warned = append(warned, msg) })
	defer SetWarner(nil)
	Warn(l, "plaintext")
	if len(warned) != 1 || len(lines) != 1 {
		t.Fatalf("with a warner: warned %v, info %v", warned, lines)
	}
}
