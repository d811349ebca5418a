// Package testenv starts a real control plane (kube-apiserver + etcd through
// controller-runtime's envtest) with eso's CRDs installed, and runs eso's core
// modules against it. The binaries come from KUBEBUILDER_ASSETS, which
// `make test` builds from Go modules and caches.
package testenv

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	upgen "github.com/eso-dev/eso/apis/upstreamv1/generators"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/wiring"
	"github.com/eso-dev/eso/providers/plugin"
)

// Env is a running control plane.
type Env struct {
	env    *envtest.Environment
	Config *rest.Config
	// Client talks straight to the API server (no cache), with eso's scheme.
	Client client.Client
}

// RepoRoot is the repository's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// CRDDir holds the generated CRDs.
func CRDDir() string { return filepath.Join(RepoRoot(), "apis", "crds") }

// Start starts kube-apiserver and etcd and installs the CRDs. Call Stop when done.
func Start() (*Env, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: run the tests with `make test`, which builds kube-apiserver and etcd")
	}
	logLevel.SetLevel(zapLevel())
	ctrl.SetLogger(zap.New(zap.WriteTo(logWriter()), zap.Level(logLevel), zap.StacktraceLevel(zapcore.PanicLevel)))
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{CRDDir()},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	catalog, err := plugin.NewIndex(wiring.Plugins())
	if err != nil {
		return nil, err
	}
	// The v1 stores too: tests create them whether or not eso serves them.
	scheme, err := manager.NewScheme(catalog, manager.SchemeAdders{Adders: []func(*kruntime.Scheme) error{v1stores.AddToScheme, upgen.AddToScheme}})
	if err != nil {
		return nil, err
	}
	// Tests also create objects eso itself never touches (RBAC, ...).
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	return &Env{env: env, Config: cfg, Client: c}, nil
}

// UserConfig is a client configuration for a new user of the control plane,
// authenticated by a client certificate, who may do only what RBAC grants.
func (e *Env) UserConfig(t testing.TB, name string) *rest.Config {
	t.Helper()
	user, err := e.env.AddUser(envtest.User{Name: name}, nil)
	if err != nil {
		t.Fatalf("adding user %s: %v", name, err)
	}
	return user.Config()
}

// Stop stops the control plane.
func (e *Env) Stop() error { return e.env.Stop() }

// Main is a TestMain body: it starts the control plane, runs the tests, stops it.
// A fuzzing run (go test -fuzz) starts no control plane: fuzz targets need
// none, and every fuzz worker process runs Main.
func Main(m *testing.M, env **Env) {
	if fuzzing() {
		os.Exit(m.Run())
	}
	e, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	reportLogs(code != 0)
	os.Exit(code)
}

func fuzzing() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	fuzz, worker := flag.Lookup("test.fuzz"), flag.Lookup("test.fuzzworker")
	return (fuzz != nil && fuzz.Value.String() != "") || (worker != nil && worker.Value.String() == "true")
}

// Namespace creates a namespace with a unique name and the given labels.
// When the test ends its ExternalSecrets and SecretStores are deleted (the
// control plane runs no namespace controller), so that the eso instances of
// later tests do not keep reconciling them against servers that are gone.
func (e *Env) Namespace(t testing.TB, prefix string, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: labels}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		for _, obj := range []client.Object{&esv1.ExternalSecret{}, &ssv2.SecretStore{}} {
			if err := e.Client.DeleteAllOf(ctx, obj, client.InNamespace(ns.Name)); err != nil {
				t.Logf("cleaning up namespace %s: %v", ns.Name, err)
			}
		}
	})
	return ns.Name
}

// logFile keeps eso's logs of a test binary's run out of the test output:
// tests provoke errors on purpose, and their logs would bury a failure. A
// failing run prints the file's tail and keeps it; ESO_TEST_DEBUG logs
// everything to stderr instead.
var logFile *os.File

func logWriter() io.Writer {
	if os.Getenv("ESO_TEST_DEBUG") != "" {
		return os.Stderr
	}
	f, err := os.CreateTemp("", "eso-test-*.log")
	if err != nil {
		return os.Stderr
	}
	logFile = f
	return f
}

// logTail is how many lines of eso's log a failing run prints.
const logTail = 60

func reportLogs(failed bool) {
	if logFile == nil {
		return
	}
	_ = logFile.Close()
	if !failed {
		_ = os.Remove(logFile.Name())
		return
	}
	data, err := os.ReadFile(logFile.Name())
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	fmt.Fprintf(os.Stderr, "eso's error log of this run: %s (%d lines; the last %d follow)\n", logFile.Name(), len(lines), min(logTail, len(lines)))
	for _, l := range lines[max(0, len(lines)-logTail):] {
		fmt.Fprintln(os.Stderr, l)
	}
}

// logLevel is the level eso logs at in tests, lowered by CaptureLogs.
var logLevel = uberzap.NewAtomicLevel()

// CaptureLogs makes eso log as much as an operator can make it log
// (--log-level=debug) until the test ends, and returns what eso has logged
// since the call: for tests that check what logs must never hold. It skips
// the test when ESO_TEST_DEBUG sends the logs to stderr instead of a file.
// (Deeper V levels, which eso cannot be set to, include client-go's
// request and response bodies.)
func CaptureLogs(t testing.TB) (logged func() string) {
	t.Helper()
	return captureLogs(t, zapcore.DebugLevel)
}

// CaptureInfoLogs is CaptureLogs at eso's default level (--log-level=info):
// for tests of what an operator reads.
func CaptureInfoLogs(t testing.TB) (logged func() string) {
	t.Helper()
	return captureLogs(t, zapcore.InfoLevel)
}

func captureLogs(t testing.TB, level zapcore.Level) (logged func() string) {
	t.Helper()
	if logFile == nil {
		t.Skip("eso's logs go to stderr (ESO_TEST_DEBUG); this test reads them from their file")
	}
	start, err := logFile.Seek(0, io.SeekEnd)
	if err != nil {
		t.Fatal(err)
	}
	before := logLevel.Level()
	logLevel.SetLevel(level)
	t.Cleanup(func() { logLevel.SetLevel(before) })
	return func() string {
		t.Helper()
		if err := logFile.Sync(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(logFile.Name())
		if err != nil {
			t.Fatal(err)
		}
		return string(data[min(int(start), len(data)):])
	}
}

// zapLevel logs errors only, unless ESO_TEST_DEBUG is set.
func zapLevel() zapcore.Level {
	if os.Getenv("ESO_TEST_DEBUG") != "" {
		return zapcore.Level(-2)
	}
	return zapcore.ErrorLevel
}
