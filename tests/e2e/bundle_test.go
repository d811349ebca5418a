//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	esoNamespace = "eso-system"
	esoRelease   = "eso"
)

// unpackBundle unpacks the bundle and returns its top directory.
func unpackBundle(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	shell(t, dir, "tar -xzf "+shellQuote(bundle))
	tops, err := filepath.Glob(filepath.Join(dir, "eso-*-bundle"))
	if err != nil || len(tops) != 1 {
		t.Fatalf("the bundle holds %v, want one eso-<version>-bundle directory", tops)
	}
	return tops[0]
}

// readmeCommands returns the sh blocks of the README section headed
// heading (up to the next heading of its level or above), so that the test
// runs what a user reads and the two cannot drift.
func readmeCommands(t *testing.T, readme, heading string) string {
	t.Helper()
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	level := len(heading) - len(strings.TrimLeft(heading, "#"))
	var blocks []string
	var block []string
	inSection, inFence, found := false, false, false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case inFence && strings.HasPrefix(line, "```"):
			inFence = false
			if block != nil {
				blocks = append(blocks, strings.Join(block, "\n"))
				block = nil
			}
		case inFence:
			if block != nil {
				block = append(block, line)
			}
		case strings.HasPrefix(line, "```"):
			inFence = true
			if inSection && strings.TrimPrefix(line, "```") == "sh" {
				block = []string{}
			}
		case strings.HasPrefix(line, "#"):
			l := len(line) - len(strings.TrimLeft(line, "#"))
			if line == heading {
				inSection, found = true, true
			} else if inSection && l <= level && strings.HasPrefix(line[l:], " ") {
				inSection = false
			}
		}
	}
	if !found {
		t.Fatalf("%s has no section %q", readme, heading)
	}
	if len(blocks) == 0 {
		t.Fatalf("section %q of %s has no sh block", heading, readme)
	}
	return strings.Join(blocks, "\n")
}

// TestBundleInstall follows the bundle's README on the node, word for word,
// then checks that eso runs as the chart says, does its job for a workload,
// serves metrics only to whom it should, and that an uninstall loses nothing.
func TestBundleInstall(t *testing.T) {
	ctx := context.Background()
	startCluster(t)
	root := unpackBundle(t)
	readme := filepath.Join(root, "README.md")

	if !t.Run("air-gapped install as the README says", func(t *testing.T) {
		shell(t, root, readmeCommands(t, readme, "## Check the bundle"))
		shell(t, root, readmeCommands(t, readme, "## With Helm"))
		pod := waitAvailable(t, esoNamespace, "app.kubernetes.io/instance="+esoRelease)
		checkRunsAsTheChartSays(t, ctx, pod)
		checkNothingPulled(t, ctx, pod)
	}) {
		t.FailNow()
	}
	if !t.Run("a workload reads what eso synced, and its rotation", func(t *testing.T) {
		checkWorkloadSeesSecret(t, ctx)
	}) {
		t.FailNow()
	}
	t.Run("rollout restarts: one new ReplicaSet per change, none for a refresh", func(t *testing.T) {
		checkRolloutRestarts(t, ctx, root)
	})
	t.Run("metrics only for the metrics-reader role", func(t *testing.T) {
		checkMetricsAuthorization(t, ctx)
	})
	t.Run("uninstall keeps CRDs, resources and Secrets", func(t *testing.T) {
		shell(t, root, "helm uninstall "+esoRelease+" --namespace "+esoNamespace+" --wait")
		for _, crd := range []string{"externalsecrets.external-secrets.io", "secretstores.external-secrets.io", "pushsecrets.external-secrets.io"} {
			kubectl(t, "get", "crd", crd)
		}
		kubectl(t, "-n", workloadNamespace, "get", "externalsecret", "app-token")
		s, err := cluster.Client.CoreV1().Secrets(workloadNamespace).Get(ctx, "app-token", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the synced Secret after uninstall: %v", err)
		}
		if len(s.Data["token"]) == 0 {
			t.Fatalf("the synced Secret lost its data on uninstall: %v", s.Data)
		}
	})
}

// waitAvailable waits until the Deployment labelled selector in ns is
// Available with every replica ready, and returns one of its Pods.
func waitAvailable(t *testing.T, ns, selector string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	var pod *corev1.Pod
	eventually(t, 3*time.Minute, "Deployment "+selector+" Available", func() error {
		deps, err := cluster.Client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		if len(deps.Items) != 1 {
			return fmt.Errorf("%d Deployments", len(deps.Items))
		}
		d := deps.Items[0]
		available := false
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
				available = true
			}
		}
		if !available || d.Status.ReadyReplicas != *d.Spec.Replicas || d.Status.UpdatedReplicas != *d.Spec.Replicas {
			return fmt.Errorf("%s: %d/%d ready; pods: %s", d.Name, d.Status.ReadyReplicas, *d.Spec.Replicas, podStates(ctx, ns, selector))
		}
		pods, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil || len(pods.Items) == 0 {
			return fmt.Errorf("no Pods: %v", err)
		}
		pod = &pods.Items[0]
		return nil
	})
	return pod
}

// podStates describes the Pods labelled selector, for failure messages.
func podStates(ctx context.Context, ns, selector string) string {
	pods, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return err.Error()
	}
	var parts []string
	for i := range pods.Items {
		parts = append(parts, podState(&pods.Items[i]))
	}
	return strings.Join(parts, "; ")
}

// podState describes a Pod and its containers, for failure messages.
func podState(p *corev1.Pod) string {
	state := p.Name + ": " + string(p.Status.Phase)
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Waiting != nil:
			state += fmt.Sprintf(" %s waiting: %s %s", cs.Name, cs.State.Waiting.Reason, cs.State.Waiting.Message)
		case cs.State.Terminated != nil:
			state += fmt.Sprintf(" %s terminated: %s %s", cs.Name, cs.State.Terminated.Reason, cs.State.Terminated.Message)
		default:
			state += fmt.Sprintf(" %s ready=%t restarts=%d", cs.Name, cs.Ready, cs.RestartCount)
		}
	}
	return state
}

// checkRunsAsTheChartSays looks at eso's container process on the node:
// uid and gid 65532, a read-only root filesystem, and probes that pass
// (Ready, never restarted).
func checkRunsAsTheChartSays(t *testing.T, ctx context.Context, pod *corev1.Pod) {
	t.Helper()
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == "eso" && (!cs.Ready || cs.RestartCount != 0) {
			t.Fatalf("eso's container: ready=%t restarts=%d", cs.Ready, cs.RestartCount)
		}
	}
	pid := taskPID(t, ctx, containerID(t, pod, "eso"))
	status, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"Uid", "Gid"} {
		m := regexp.MustCompile(`(?m)^` + field + `:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)`).FindStringSubmatch(string(status))
		if m == nil || m[1] != "65532" || m[2] != "65532" || m[3] != "65532" || m[4] != "65532" {
			t.Errorf("eso's process %s: %v, want 65532 throughout", field, m)
		}
	}
	if m := regexp.MustCompile(`(?m)^NoNewPrivs:\s+1$`).FindString(string(status)); m == "" {
		t.Errorf("eso's process may gain privileges (NoNewPrivs is not set)")
	}
	if m := regexp.MustCompile(`(?m)^CapEff:\s+0+$`).FindString(string(status)); m == "" {
		t.Errorf("eso's process has effective capabilities: %s", regexp.MustCompile(`(?m)^CapEff:.*$`).FindString(string(status)))
	}
	mounts, err := os.ReadFile(filepath.Join("/proc", pid, "mountinfo"))
	if err != nil {
		t.Fatal(err)
	}
	rootRO := false
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		if len(f) > 5 && f[4] == "/" {
			rootRO = strings.HasPrefix(f[5], "ro")
		}
	}
	if !rootRO {
		t.Errorf("eso's root filesystem is writable")
	}
}

// taskPID returns the host PID of a container's process.
func taskPID(t *testing.T, ctx context.Context, containerID string) string {
	t.Helper()
	out, err := cluster.Ctr(ctx, "tasks", "ls")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == containerID {
			return f[1]
		}
	}
	t.Fatalf("container %s is not running:\n%s", containerID, out)
	return ""
}

// checkNothingPulled: the kubelet never tried to pull eso's image, and
// never will (the air-gapped install says Never).
func checkNothingPulled(t *testing.T, ctx context.Context, pod *corev1.Pod) {
	t.Helper()
	for _, c := range pod.Spec.Containers {
		if c.ImagePullPolicy != corev1.PullNever {
			t.Errorf("container %s: imagePullPolicy %s, want Never", c.Name, c.ImagePullPolicy)
		}
	}
	events, err := cluster.Client.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + pod.Name,
	})
	if err != nil {
		t.Fatal(err)
	}
	present := false
	for _, e := range events.Items {
		switch e.Reason {
		case "Pulling", "Failed", "BackOff", "ErrImageNeverPull":
			t.Errorf("kubelet event %s: %s", e.Reason, e.Message)
		case "Pulled":
			present = present || strings.Contains(e.Message, "already present")
		}
	}
	if !present {
		t.Errorf("no event says the image was already present on the node")
	}
}

// TestOneFileInstall follows the bundle README's install without Helm, word
// for word, on a fresh cluster: eso runs as on the Helm path.
func TestOneFileInstall(t *testing.T) {
	ctx := context.Background()
	startCluster(t)
	root := unpackBundle(t)
	readme := filepath.Join(root, "README.md")
	shell(t, root, readmeCommands(t, readme, "## Check the bundle"))
	shell(t, root, readmeCommands(t, readme, "## Anywhere else, without Helm"))
	pod := waitAvailable(t, esoNamespace, "app.kubernetes.io/name=eso")
	checkRunsAsTheChartSays(t, ctx, pod)
	checkNothingPulled(t, ctx, pod)
	checkWorkloadSeesSecret(t, ctx)
}
