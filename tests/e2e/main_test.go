//go:build e2e

// Package e2e runs eso as users run it: its own image, as Pods under a
// kubelet, on a real single-node cluster (tests/node) with no network
// beyond this machine, installed from the air-gapped bundle. `make e2e`
// builds everything and runs it as root.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eso-dev/eso/tests/node"
)

// WorkloadImage is the application image the tests run beside eso.
const WorkloadImage = "eso.local/e2e/workload:1"

var (
	cluster *node.Cluster
	// bundle is the tarball `make bundle` wrote.
	bundle string
	// toolPath is a PATH with helm, kubectl and ctr, as a user's shell has.
	toolPath string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	need := map[string]string{}
	for _, v := range []string{"KUBEBUILDER_ASSETS", "ESO_NODE_BIN", "HELM_BIN", "ESO_BUNDLE"} {
		need[v] = os.Getenv(v)
		if need[v] == "" {
			fmt.Fprintf(os.Stderr, "%s is not set: run the end-to-end tests with `make e2e`\n", v)
			return 1
		}
	}
	bundle = need["ESO_BUNDLE"]
	toolPath = strings.Join([]string{need["KUBEBUILDER_ASSETS"], filepath.Dir(need["HELM_BIN"]), os.Getenv("PATH")}, ":")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	started := time.Now()
	var err error
	cluster, err = node.Start(ctx, node.Options{
		ControlPlaneBin: need["KUBEBUILDER_ASSETS"],
		NodeBin:         need["ESO_NODE_BIN"],
		Logf:            func(f string, a ...any) { fmt.Printf(f+"\n", a...) },
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the node: %v\n", err)
		return 1
	}
	fmt.Printf("node: up in %s\n", time.Since(started).Round(time.Second))
	code := func() int {
		archive := filepath.Join(cluster.LogDir, "workload.tar")
		if err := node.BuildImage(ctx, "github.com/eso-dev/eso/tests/e2e/workload", WorkloadImage, archive); err != nil {
			fmt.Fprintf(os.Stderr, "workload image: %v\n", err)
			return 1
		}
		if err := cluster.ImportImage(ctx, archive); err != nil {
			fmt.Fprintf(os.Stderr, "workload image: %v\n", err)
			return 1
		}
		return m.Run()
	}()
	if err := cluster.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the node: %v\n", err)
		code = 1
	}
	fmt.Printf("node: component logs in %s\n", cluster.LogDir)
	return code
}

// shell runs script with bash in dir, as a user would type it: helm,
// kubectl and ctr on PATH, KUBECONFIG pointing at the cluster.
func shell(t *testing.T, dir, script string) string {
	t.Helper()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+toolPath, "KUBECONFIG="+cluster.Kubeconfig)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s\n%s: %v", script, out, err)
	}
	return string(out)
}

// kubectl runs kubectl against the cluster.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	return shell(t, "", "kubectl "+shellQuote(args...))
}

// apply applies manifests with kubectl, as a user would.
func apply(t *testing.T, manifests string) {
	t.Helper()
	cmd := exec.Command("kubectl", "apply", "--server-side", "-f", "-")
	cmd.Env = append(os.Environ(), "PATH="+toolPath, "KUBECONFIG="+cluster.Kubeconfig)
	cmd.Stdin = strings.NewReader(manifests)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply:\n%s\n%s: %v", manifests, out, err)
	}
}

func shellQuote(args ...string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}

// eventually polls check every half second until it returns nil or
// timeout passes, then fails with check's last error.
func eventually(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
