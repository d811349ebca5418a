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
	// cluster is the current test's cluster (startCluster): every test
	// starts on a fresh one, so none depends on what another left.
	cluster *node.Cluster
	// bundle is the tarball `make bundle` wrote.
	bundle string
	// nextImage is a docker archive of eso built as another version, for
	// upgrades; nextTag is its tag.
	nextImage, nextTag string
	// toolPath is a PATH with helm, kubectl and ctr, as a user's shell has.
	toolPath string
	// workloadArchive is WorkloadImage as a docker archive.
	workloadArchive string
	nodeOptions     node.Options
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	need := map[string]string{}
	for _, v := range []string{"KUBEBUILDER_ASSETS", "ESO_NODE_BIN", "HELM_BIN", "ESO_BUNDLE", "ESO_NEXT_IMAGE", "ESO_NEXT_TAG"} {
		need[v] = os.Getenv(v)
		if need[v] == "" {
			fmt.Fprintf(os.Stderr, "%s is not set: run the end-to-end tests with `make e2e`\n", v)
			return 1
		}
	}
	bundle, nextImage, nextTag = need["ESO_BUNDLE"], need["ESO_NEXT_IMAGE"], need["ESO_NEXT_TAG"]
	toolPath = strings.Join([]string{need["KUBEBUILDER_ASSETS"], filepath.Dir(need["HELM_BIN"]), os.Getenv("PATH")}, ":")
	nodeOptions = node.Options{
		ControlPlaneBin: need["KUBEBUILDER_ASSETS"],
		NodeBin:         need["ESO_NODE_BIN"],
		Logf:            func(f string, a ...any) { fmt.Printf(f+"\n", a...) },
	}
	dir, err := os.MkdirTemp("", "eso-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	workloadArchive = filepath.Join(dir, "workload.tar")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := node.BuildImage(ctx, "github.com/eso-dev/eso/tests/e2e/workload", WorkloadImage, workloadArchive); err != nil {
		fmt.Fprintf(os.Stderr, "workload image: %v\n", err)
		return 1
	}
	return m.Run()
}

// startCluster brings up a fresh single-node cluster for t, with the
// workload image loaded, and stops it when t ends.
func startCluster(t *testing.T) *node.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	started := time.Now()
	c, err := node.Start(ctx, nodeOptions)
	if err != nil {
		t.Fatalf("starting the node: %v", err)
	}
	cluster = c
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the node: %v", err)
		}
		t.Logf("node: component logs in %s", c.LogDir)
	})
	t.Logf("node: up in %s", time.Since(started).Round(100*time.Millisecond))
	if err := c.ImportImage(ctx, workloadArchive); err != nil {
		t.Fatalf("workload image: %v", err)
	}
	return c
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
