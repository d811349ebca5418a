//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkRolloutRestarts: with rolloutRestarts enabled through the chart, a
// Deployment asking with Reloader's auto annotation gets one new
// ReplicaSet for each change of the Secret it reads, whose Pods see the new
// value in their environment, and none for eso's refreshes that change
// nothing. It follows checkWorkloadSeesSecret (ExternalSecret app-token,
// refreshed every 5 s).
func checkRolloutRestarts(t *testing.T, ctx context.Context, root string) {
	t.Helper()
	charts, _ := filepath.Glob(filepath.Join(root, "charts", "eso-[0-9]*.tgz"))
	if len(charts) != 1 {
		t.Fatalf("the bundle holds charts %v, want one eso chart", charts)
	}
	shell(t, root, "helm upgrade "+esoRelease+" "+shellQuote(charts[0])+" --namespace "+esoNamespace+
		" --reuse-values --set rolloutRestarts.enabled=true --wait --timeout 3m")
	waitAvailable(t, esoNamespace, "app.kubernetes.io/instance="+esoRelease)

	apply(t, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: reader
  namespace: `+workloadNamespace+`
  annotations: {reloader.stakater.com/auto: "true"}
spec:
  replicas: 1
  selector: {matchLabels: {app: reader}}
  template:
    metadata: {labels: {app: reader}}
    spec:
      serviceAccountName: app
      securityContext: {runAsNonRoot: true, runAsUser: 65532}
      containers:
      - name: app
        image: `+WorkloadImage+`
        imagePullPolicy: Never
        readinessProbe:
          httpGet: {path: "/env?name=HOSTNAME", port: 8080}
          periodSeconds: 1
        env:
        - name: TOKEN
          valueFrom: {secretKeyRef: {name: app-token, key: token}}
`)
	readerSees := func(want string) {
		t.Helper()
		eventually(t, 2*time.Minute, "the reader's Pods to see TOKEN "+want, func() error {
			pods, err := cluster.Client.CoreV1().Pods(workloadNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=reader"})
			if err != nil {
				return err
			}
			if len(pods.Items) != 1 {
				return fmt.Errorf("%d Pods", len(pods.Items))
			}
			p := pods.Items[0]
			if p.DeletionTimestamp != nil || p.Status.PodIP == "" || !ready(&p) {
				return fmt.Errorf("Pod %s: %s", p.Name, podState(&p))
			}
			got, err := ask(p.Status.PodIP, "/env", url.Values{"name": {"TOKEN"}})
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("TOKEN is %q", got)
			}
			return nil
		})
	}
	replicaSets := func() int {
		t.Helper()
		list, err := cluster.Client.AppsV1().ReplicaSets(workloadNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=reader"})
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Items)
	}
	readerSees("rotated-value")
	// Refreshes every 5 s that change nothing: no new ReplicaSet.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if n := replicaSets(); n != 1 {
			t.Fatalf("%d ReplicaSets while nothing changed, want 1", n)
		}
	}
	apply(t, fakeStore("third-value"))
	readerSees("third-value")
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if n := replicaSets(); n != 2 {
			t.Fatalf("%d ReplicaSets after one change, want 2", n)
		}
	}
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
