//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Lease eso's replicas elect a leader with, and its timing (eso's
// defaults: --leader-election-lease and --leader-election-retry). A standby
// asks again every retry period stretched by client-go's jitter (up to
// 2.2 times), so after a crash it leads at most a lease duration and one
// jittered retry later.
const (
	leaderLease    = "eso-core.external-secrets.io"
	leaseDuration  = 15 * time.Second
	jitteredRetry  = 2 * time.Second * 22 / 10
	handoverMargin = time.Second
)

// TestFailover runs two replicas, 40 ExternalSecrets refreshing every 10 s,
// and takes the leader away twice: its Pod force-deleted, then its process
// killed with SIGKILL. Each time a live process leads within the lease
// duration (plus one retry): the other replica, or, after the kill, either
// it or the killed container restarted by the kubelet, whichever asks first
// once the Lease expires. A change made during the handover is written to
// its Secret exactly once, nothing else is written, and a generated password
// is neither regenerated nor lost.
func TestFailover(t *testing.T) {
	ctx := context.Background()
	startCluster(t)
	installFromBundle(t, unpackBundle(t), "--set", "replicas=2")
	f := syncFleet(t, 40, "10s")
	apply(t, `apiVersion: v1
kind: Namespace
metadata: {name: generated}
---
apiVersion: provider.generator.external-secrets.io/v2alpha1
kind: Password
metadata: {name: db-password, namespace: generated}
spec: {length: 24}
---
apiVersion: generator.external-secrets.io/v2alpha1
kind: Generator
metadata: {name: db-password, namespace: generated}
spec:
  providerConfig:
    providerRef: {kind: Password, name: db-password}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: generated, namespace: generated}
spec:
  refreshInterval: 720h
  target: {name: generated}
  dataFrom:
  - sourceRef:
      generatorRef: {apiVersion: generator.external-secrets.io/v2alpha1, kind: Generator, name: db-password}
`)
	var password string
	eventually(t, time.Minute, "the generated password", func() error {
		s, err := cluster.Client.CoreV1().Secrets("generated").Get(ctx, "generated", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if password = string(s.Data["password"]); len(password) != 24 {
			return fmt.Errorf("password of %d bytes", len(password))
		}
		return nil
	})
	rec := record(t, append(f.namespaces, "generated"))
	allowed := map[string]int{}

	for round, takeAway := range []struct {
		name string
		do   func(t *testing.T, pod *corev1.Pod)
	}{
		{"leader Pod force-deleted", func(t *testing.T, pod *corev1.Pod) {
			kubectl(t, "-n", esoNamespace, "delete", "pod", pod.Name, "--force", "--grace-period=0")
		}},
		{"leader process killed", func(t *testing.T, pod *corev1.Pod) {
			pid, err := strconv.Atoi(taskPID(t, ctx, containerID(t, pod, "eso")))
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(takeAway.name, func(t *testing.T) {
			leader, identity := waitLeader(t, "")
			takeAway.do(t, leader)
			gone := time.Now()
			value := fmt.Sprintf("changed-during-handover-%d", round)
			apply(t, f.store("fleet-1", "v1", map[int]string{0: value}))
			allowed["fleet-1/es-0"]++
			next, _ := waitLeader(t, identity)
			took := time.Since(gone)
			t.Logf("%s: %s leads %s later (it was %s)", takeAway.name, next.Name, took.Round(100*time.Millisecond), leader.Name)
			if took > leaseDuration+jitteredRetry+handoverMargin {
				t.Errorf("a live process led after %s, past the lease duration %s and a jittered retry %s", took, leaseDuration, jitteredRetry)
			}
			waitSecretValue(t, time.Minute, "fleet-1", "es-0", "value", value)
			waitAvailable(t, esoNamespace, "app.kubernetes.io/instance="+esoRelease)
		})
	}
	time.Sleep(5 * time.Second)
	rec.check(t, allowed)
	s, err := cluster.Client.CoreV1().Secrets("generated").Get(ctx, "generated", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Data["password"]) != password {
		t.Errorf("the generated password changed across the failovers")
	}
	f.waitReady(t, time.Second)
}

// waitLeader waits until the Lease is held by an identity other than not
// (a process: the Pod's name and a random suffix), and returns the
// holder's Pod and identity.
func waitLeader(t *testing.T, not string) (*corev1.Pod, string) {
	t.Helper()
	ctx := context.Background()
	var leader *corev1.Pod
	var identity string
	eventually(t, time.Minute, "a leader other than "+not, func() error {
		lease, err := cluster.Client.CoordinationV1().Leases(esoNamespace).Get(ctx, leaderLease, metav1.GetOptions{})
		if err != nil {
			return err
		}
		identity = ""
		if lease.Spec.HolderIdentity != nil {
			identity = *lease.Spec.HolderIdentity
		}
		if identity == "" || identity == not {
			return fmt.Errorf("the Lease is held by %q", identity)
		}
		holder, _, _ := strings.Cut(identity, "_")
		pod, err := cluster.Client.CoreV1().Pods(esoNamespace).Get(ctx, holder, metav1.GetOptions{})
		if err != nil {
			return err
		}
		leader = pod
		return nil
	})
	return leader, identity
}

// containerID returns the runtime's ID of a Pod's container.
func containerID(t *testing.T, pod *corev1.Pod, name string) string {
	t.Helper()
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == name && cs.ContainerID != "" {
			return strings.TrimPrefix(cs.ContainerID, "containerd://")
		}
	}
	t.Fatalf("Pod %s has no running container %s", pod.Name, name)
	return ""
}
