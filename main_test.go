package main

import (
	"bytes"
	"context"
	"debug/elf"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
	"github.com/eso-dev/eso/providers/catalog"
)

func TestCommandLine(t *testing.T) {
	// A kubeconfig that parses; provider mode builds its client lazily, so
	// the server it names is never contacted by these cases.
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args        []string
		code        int
		out, errOut string
	}{
		{[]string{"--mode=bogus"}, 2, "", `invalid --mode "bogus": valid modes are core, provider`},
		{[]string{"--mode=provider"}, 2, "", "provider mode serves mTLS only and needs --tls-cert-file, --tls-key-file, --tls-client-ca-file; pass --insecure"},
		{[]string{"--mode=provider", "--tls-cert-file=tls.crt", "--tls-key-file=tls.key"}, 2, "", "needs --tls-client-ca-file"},
		{[]string{"--mode=provider", "--insecure", "--tls-cert-file=tls.crt"}, 2, "", "--insecure serves plaintext and cannot be combined with --tls-cert-file"},
		{[]string{"--tls-cert-file=tls.crt"}, 2, "", "apply only to --mode=provider"},
		{[]string{"--mode=provider", "--insecure", "--kubeconfig=/nonexistent/kubeconfig"}, 1, "", "/nonexistent/kubeconfig"},
		{[]string{"--mode=provider", "--kubeconfig=" + kubeconfig, "--tls-cert-file=/nonexistent/tls.crt",
			"--tls-key-file=/nonexistent/tls.key", "--tls-client-ca-file=/nonexistent/ca.crt"}, 1, "", "reading TLS material"},
		{[]string{"--mode=provider", "--insecure", "--kubeconfig=" + kubeconfig, "--provider-kinds=Fake,NoSuchKind"}, 2, "", "NoSuchKind is not compiled into this binary"},
		{[]string{"--concurrent=0"}, 2, "", "--concurrent and --store-concurrent must be at least 1"},
		{[]string{"--client-qps=-1"}, 2, "", "--client-qps may not be negative"},
		{[]string{"--no-such-flag"}, 2, "", "unknown flag --no-such-flag (eso --help lists the flags)"},
		{[]string{"--concurent=3"}, 2, "", "unknown flag --concurent: did you mean --concurrent?"},
		{[]string{"provders"}, 2, "", `unknown command "provders": did you mean "providers"?`},
		{[]string{"--help"}, 0, "Provider mode (--mode=provider):\n  --grpc-bind-address", ""},
		{[]string{"--help"}, 0, "\n  eso migrate [--apply] ", ""},
		{[]string{"render"}, 2, "", "eso render: -f names no manifest"},
		{[]string{"rendr"}, 2, "", `unknown command "rendr": did you mean "render"? (commands: providers, version, migrate, render, explain, check)`},
		{[]string{"--help"}, 0, "Exit codes:\n  0  ", ""},
		{[]string{"--help"}, 0, "--namespace\n      watch only these namespaces, comma-separated", ""},
		{[]string{"--mode=provider", "--insecure", "--kubeconfig=" + kubeconfig, "--provider-kinds=Fakee"}, 2, "", "unknown kind Fakee: did you mean Fake?"},
		{[]string{"providers", "-o", "json"}, 0, `"kind": "Fake"`, ""},
		{[]string{"providers", "-o", "yaml"}, 2, "", "usage: eso providers [-o table|json]"},
		{[]string{"--version"}, 0, "build tags: ", ""},
		{[]string{"extra"}, 2, "", `unexpected argument "extra"`},
		{[]string{"--kubeconfig=/nonexistent/kubeconfig"}, 1, "", "/nonexistent/kubeconfig"},
		{[]string{"providers"}, 0, "Kubernetes.provider.secretstore.external-secrets.io/v2alpha1", ""},
		{[]string{"providers"}, 0, "GENERATOR", ""},
		{[]string{"providers"}, 0, "Password.provider.generator.external-secrets.io/v2alpha1", ""},
		{[]string{"version"}, 0, "build tags: " + strings.Join(catalog.TagNames(), ","), ""},
		{[]string{"explan"}, 2, "", `unknown command "explan": did you mean "explain"?`},
		{[]string{"explain"}, 2, "", "usage: eso explain KIND/NAME"},
		{[]string{"explain", "deployment/x"}, 2, "", `unknown kind "deployment"`},
		{[]string{"explain", "es.v1alpha1.external-secrets.io/x"}, 2, "", "es is served as external-secrets.io/v1 only, not external-secrets.io/v1alpha1"},
		{[]string{"explain", "es/x", "--kubeconfig=/nonexistent/kubeconfig"}, 1, "", "/nonexistent/kubeconfig"},
		{[]string{"check", "store"}, 2, "", "usage: eso check store NAME"},
		{[]string{"check", "store", "x", "--kubeconfig=/nonexistent/kubeconfig"}, 1, "", "/nonexistent/kubeconfig"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != tc.code {
				t.Errorf("exit code %d, want %d (stderr: %s)", code, tc.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.out) {
				t.Errorf("stdout %q does not contain %q", stdout.String(), tc.out)
			}
			if !strings.Contains(stderr.String(), tc.errOut) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tc.errOut)
			}
		})
	}
}

// TestCommandsListed: the command table is the one list of commands. Each
// is dispatched (it does not fall through to the modes' flags), listed by
// --help, named by the unknown-command error and by main.go's doc comment;
// the doc comment names no other, and run dispatches through the table
// only.
func TestCommandsListed(t *testing.T) {
	var help, unknown bytes.Buffer
	if code := run([]string{"--help"}, &help, io.Discard); code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	if code := run([]string{"no-such-command"}, io.Discard, &unknown); code != 2 {
		t.Fatalf("an unknown command: exit %d", code)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	file, err := parser.ParseFile(token.NewFileSet(), "main.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	// The doc comment's lines "eso <command> ...", modes aside.
	var documented []string
	for _, line := range strings.Split(file.Doc.Text(), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 1 && fields[0] == "eso" && !strings.HasPrefix(fields[1], "-") && !strings.HasPrefix(fields[1], "[") {
			documented = append(documented, fields[1])
		}
	}
	var names []string
	for _, c := range commands {
		names = append(names, c.Name)
		if c.run == nil || c.Summary == "" {
			t.Errorf("command %s has no run or no summary", c.Name)
		}
		if !strings.Contains(help.String(), "\n  eso "+c.Name+" ") {
			t.Errorf("eso --help does not list %s:\n%s", c.Name, help.String())
		}
		if !strings.Contains(unknown.String(), c.Name) {
			t.Errorf("the unknown-command error does not name %s: %s", c.Name, unknown.String())
		}
		// Not dispatched, the name would reach the modes' flag parsing,
		// which refuses it as an argument.
		var out, errs bytes.Buffer
		run([]string{c.Name, "--help"}, &out, &errs)
		if strings.Contains(out.String(), "Flags of both modes") || strings.Contains(errs.String(), "unknown command") ||
			strings.Contains(errs.String(), "unexpected argument") {
			t.Errorf("eso %s is not dispatched: it reached the modes' flags: %s", c.Name, errs.String())
		}
	}
	if !slices.Equal(documented, names) {
		t.Errorf("main.go's doc comment lists %v, the command table %v", documented, names)
	}
	// Dispatch is the table's: run switches on no command name of its own.
	for _, decl := range file.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok && fn.Name.Name == "run" {
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if _, ok := n.(*ast.SwitchStmt); ok {
					t.Errorf("run dispatches with a switch: add the command to the table instead")
				}
				return true
			})
		}
	}
}

// TestKubectlPlugin: as kubectl-eso, eso runs its commands and never the
// operator: `kubectl eso` alone prints its usage.
func TestKubectlPlugin(t *testing.T) {
	for argv0, want := range map[string]bool{"/usr/local/bin/kubectl-eso": true, "kubectl-eso.exe": true, "/bin/eso": false, "kubectl-esox": false} {
		if got := isKubectlPlugin(argv0); got != want {
			t.Errorf("isKubectlPlugin(%q) = %v, want %v", argv0, got, want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := kubectlPlugin(nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage: kubectl eso COMMAND, one of: providers, version, migrate, render, explain, check") {
		t.Errorf("kubectl eso: exit %d, stderr %q", code, stderr.String())
	}
	stderr.Reset()
	if code := kubectlPlugin([]string{"--leader-elect"}, &stdout, &stderr); code != 2 {
		t.Errorf("kubectl eso --leader-elect: exit %d, want 2 (the operator is not started)", code)
	}
	if code := kubectlPlugin([]string{"version"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "build tags: ") {
		t.Errorf("kubectl eso version: exit %d, stdout %q", code, stdout.String())
	}
}

// TestProviderModeServes runs `eso --mode=provider --insecure` as main does:
// it answers a handshake, serves its probes and metrics, and stops cleanly on
// SIGTERM. mTLS itself is tested in sdk/server.
func TestProviderModeServes(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	grpcAddr, metricsAddr, probeAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	var stderr bytes.Buffer
	exited := make(chan int, 1)
	go func() {
		exited <- run([]string{"--mode=provider", "--insecure", "--kubeconfig=" + kubeconfig, "--log-level=error",
			"--grpc-bind-address=" + grpcAddr, "--metrics-bind-address=" + metricsAddr, "--health-probe-bind-address=" + probeAddr,
			"--provider-kinds=Fake,Password"}, io.Discard, &stderr)
	}()
	ready := false
	for deadline := time.Now().Add(20 * time.Second); !ready && time.Now().Before(deadline); {
		select {
		case code := <-exited:
			t.Fatalf("eso exited with %d: %s", code, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := http.Get("http://" + probeAddr + "/readyz")
		if err == nil {
			ready = resp.StatusCode == http.StatusOK
			_ = resp.Body.Close()
		}
	}
	if !ready {
		t.Fatal("never ready")
	}

	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hs, err := providerv1.NewInfoClient(conn).Handshake(ctx, &providerv1.HandshakeRequest{ProtocolMajors: []uint32{1}})
	if err != nil || !slices.Equal(hs.ProviderKinds, []string{"Fake"}) || !slices.Equal(hs.GeneratorKinds, []string{"Fake", "Password"}) {
		t.Fatalf("Handshake = %v, %v", hs, err)
	}
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if !strings.Contains(string(body), `eso_grpc_server_requests_total{code="OK",method="Handshake",service="eso.provider.v1.Info"} 1`) {
		t.Errorf("the handshake is not in the metrics:\n%s", body)
	}

	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-exited:
		if code != 0 {
			t.Fatalf("exit code %d after SIGTERM: %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("eso did not stop on SIGTERM")
	}
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	return lis.Addr().String()
}

// TestBuildTagSelection builds the binary with several tag selections drawn
// from providers/catalog (none, each tag alone, the first two, minimal) and
// checks what each reports about itself and links: a component's package
// and its tag's SDK modules are in exactly the builds that select its tag.
func TestBuildTagSelection(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary several times")
	}
	tags := catalog.TagNames()
	selections := append([]string{""}, tags...)
	if len(tags) >= 2 {
		selections = append(selections, tags[0]+","+tags[1])
	}
	selections = append(selections, catalog.Minimal)
	for _, selection := range selections {
		t.Run("tags="+selection, func(t *testing.T) {
			buildTags := strings.Split(selection, ",")
			selected := catalog.Selected(buildTags)
			wantVersion := "build tags: " + strings.Join(selected, ",")
			if len(selected) == 0 {
				wantVersion = "build tags: " + catalog.Minimal
			}
			bin := filepath.Join(t.TempDir(), "eso")
			build := exec.Command("go", "build", "-tags", selection, "-o", bin, ".")
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build -tags %q: %v\n%s", selection, err, out)
			}
			version, err := exec.Command(bin, "version").Output()
			if err != nil || !strings.Contains(string(version), wantVersion) {
				t.Errorf("eso version = %q (%v), want %q", version, err, wantVersion)
			}
			listed, err := exec.Command(bin, "providers").Output()
			if err != nil {
				t.Fatal(err)
			}
			deps, err := exec.Command("go", "list", "-deps", "-tags", selection, ".").Output()
			if err != nil {
				t.Fatal(err)
			}
			depSet := map[string]bool{}
			for _, d := range strings.Fields(string(deps)) {
				depSet[d] = true
			}
			wantRows := 0
			for _, c := range catalog.Components() {
				want := c.Tag == "" || slices.Contains(selected, c.Tag)
				if want {
					wantRows++
				}
				if got := depSet[c.ImportPath()]; got != want {
					t.Errorf("%s linked = %v, want %v", c.Package, got, want)
				}
			}
			if got := strings.Count(string(listed), ".external-secrets.io/v2alpha1"); got != wantRows {
				t.Errorf("eso providers lists %d components, want %d:\n%s", got, wantRows, listed)
			}
			for _, tag := range catalog.Tags {
				for _, module := range tag.Modules {
					got := strings.Contains(string(deps), "\n"+module)
					if want := slices.Contains(selected, tag.Name); got != want {
						t.Errorf("%s (tag %s) linked = %v, want %v", module, tag.Name, got, want)
					}
				}
			}
		})
	}
}

// TestBuildWithoutV1: the tag nov1 leaves the v1 store layer (its API
// types and translation) out of the binary, which says so; a default build
// links it.
func TestBuildWithoutV1(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	const layer, types = "github.com/eso-dev/eso/app/v1compat", "github.com/eso-dev/eso/apis/upstreamv1/v1stores"
	for _, tc := range []struct {
		tags   string
		linked bool
		says   string
	}{{"", true, "external-secrets.io/v1 stores: served"}, {"nov1", false, "external-secrets.io/v1 stores: not served (built with nov1)"}} {
		deps, err := exec.Command("go", "list", "-deps", "-tags", tc.tags, ".").Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range []string{layer, types} {
			if got := slices.Contains(strings.Fields(string(deps)), pkg); got != tc.linked {
				t.Errorf("tags %q: %s linked = %v, want %v", tc.tags, pkg, got, tc.linked)
			}
		}
		bin := filepath.Join(t.TempDir(), "eso")
		build := exec.Command("go", "build", "-tags", tc.tags, "-o", bin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build -tags %q: %v\n%s", tc.tags, err, out)
		}
		if version, err := exec.Command(bin, "version").Output(); err != nil || !strings.Contains(string(version), tc.says) {
			t.Errorf("tags %q: eso version = %q (%v), want %q", tc.tags, version, err, tc.says)
		}
	}
}

// TestPlainBuildIsStatic: with cgo on (Go's default wherever a C compiler is
// found) a plain `go build` stops with a message saying how to build, and
// with CGO_ENABLED=0 it gives a static binary, as `make build` does.
func TestPlainBuildIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "eso")
	if cc, err := exec.Command("go", "env", "CC").Output(); err == nil {
		if _, err := exec.LookPath(strings.TrimSpace(string(cc))); err == nil {
			build := exec.Command("go", "build", "-o", bin, ".")
			build.Env = append(os.Environ(), "CGO_ENABLED=1")
			out, err := build.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "eso is a static binary: build it with CGO_ENABLED=0") {
				t.Errorf("go build with cgo on: %v, want a failure saying how to build; output:\n%s", err, out)
			}
		}
	}
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build with CGO_ENABLED=0: %v\n%s", err, out)
	}
	if runtime.GOOS != "linux" {
		return
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary is dynamically linked (it has an ELF interpreter)")
		}
	}
}

const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: none
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: none
  context:
    cluster: none
    user: none
current-context: none
users:
- name: none
  user:
    token: none
`

// TestNoKubeconfig: with no way to reach a cluster, eso says so in one
// sentence that names the ways to give one.
func TestNoKubeconfig(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	var stderr bytes.Buffer
	if code := run([]string{"--log-level=error"}, io.Discard, &stderr); code != 1 {
		t.Fatalf("exit code %d", code)
	}
	if got := strings.TrimSpace(stderr.String()); got != "eso: no Kubernetes configuration found: pass --kubeconfig, set $KUBECONFIG or write ~/.kube/config, or run eso in a pod" {
		t.Errorf("stderr %q", got)
	}
}
