package logging

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"
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

// TestKlogLinesAreJSON: what client-go and leader election log through
// klog comes out of Setup's logger in the same format as eso's own lines,
// not as klog's text among them.
func TestKlogLinesAreJSON(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w // the logger writes where os.Stderr points when it is built
	_, err = Setup("info", "json")
	os.Stderr = stderr
	t.Cleanup(klog.ClearLogger)
	if err != nil {
		t.Fatal(err)
	}
	klog.InfoS("failed to renew lease", "lease", "eso-system/eso-core")
	klog.Warning("client-side throttling")
	klog.Flush()
	_ = w.Close()
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %d:\n%s", len(lines), out)
	}
	for _, line := range lines {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("a klog line is not JSON: %q", line)
		}
		if entry["msg"] == nil {
			t.Errorf("no msg in %q", line)
		}
	}
	if !strings.Contains(lines[0], `"lease":"eso-system/eso-core"`) {
		t.Errorf("klog's key/value pairs lost: %s", lines[0])
	}
}
