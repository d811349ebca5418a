//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const workloadNamespace = "team-a"

// fakeStore is an upstream-style Fake SecretStore holding token.
func fakeStore(token string) string {
	return fmt.Sprintf(`apiVersion: external-secrets.io/v1
kind: SecretStore
metadata:
  name: fake
  namespace: %s
spec:
  provider:
    fake:
      data:
      - key: app/token
        value: %q
`, workloadNamespace, token)
}

// workloadPod runs the workload image as name with ServiceAccount sa and
// the extra container spec lines extra (indented for the container).
func workloadPod(ns, name, sa, extra, volumes string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  serviceAccountName: %[3]s
  securityContext: {runAsNonRoot: true, runAsUser: 65532}
  containers:
  - name: app
    image: %[4]s
    imagePullPolicy: Never
    readinessProbe:
      httpGet: {path: "/env?name=HOSTNAME", port: 8080}
      periodSeconds: 1
%[5]s
%[6]s
`, ns, name, sa, WorkloadImage, extra, volumes)
}

// podIP waits for the Pod to be Ready and returns its address, which the
// host reaches over the bridge.
func podIP(t *testing.T, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	var ip string
	eventually(t, 2*time.Minute, "Pod "+ns+"/"+name+" Ready", func() error {
		p, err := cluster.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ready(p) && p.Status.PodIP != "" {
			ip = p.Status.PodIP
			return nil
		}
		return fmt.Errorf("not Ready: %s", podState(p))
	})
	return ip
}

// ask asks the workload at ip what it sees.
func ask(ip, path string, query url.Values) (string, error) {
	client := &http.Client{Timeout: 15 * time.Second}
	resp, err := client.Get("http://" + ip + ":8080" + path + "?" + query.Encode())
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	return string(b), nil
}

// checkWorkloadSeesSecret: an ExternalSecret from a Fake store becomes a
// Secret that a real Pod reads as an environment variable and as a file,
// and a rotation at the store reaches the file.
func checkWorkloadSeesSecret(t *testing.T, ctx context.Context) {
	t.Helper()
	apply(t, `apiVersion: v1
kind: Namespace
metadata: {name: `+workloadNamespace+`}
`)
	apply(t, fakeStore("first-value"))
	apply(t, `apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata:
  name: app-token
  namespace: `+workloadNamespace+`
spec:
  refreshInterval: 5s
  secretStoreRef: {kind: SecretStore, name: fake}
  target: {name: app-token}
  data:
  - secretKey: token
    remoteRef: {key: app/token}
`)
	waitSecretValue(t, time.Minute, workloadNamespace, "app-token", "token", "first-value")
	apply(t, `apiVersion: v1
kind: ServiceAccount
metadata: {name: app, namespace: `+workloadNamespace+`}
`)
	apply(t, workloadPod(workloadNamespace, "app", "app", `    env:
    - name: TOKEN
      valueFrom: {secretKeyRef: {name: app-token, key: token}}
    volumeMounts:
    - {name: token, mountPath: /secret, readOnly: true}`, `  volumes:
  - name: token
    secret: {secretName: app-token}`))
	ip := podIP(t, workloadNamespace, "app")
	if got, err := ask(ip, "/env", url.Values{"name": {"TOKEN"}}); err != nil || got != "first-value" {
		t.Fatalf("the Pod's TOKEN: %q, %v", got, err)
	}
	if got, err := ask(ip, "/file", url.Values{"path": {"/secret/token"}}); err != nil || got != "first-value" {
		t.Fatalf("the Pod's /secret/token: %q, %v", got, err)
	}

	apply(t, fakeStore("rotated-value"))
	eventually(t, 2*time.Minute, "the rotation in the Pod's volume", func() error {
		got, err := ask(ip, "/file", url.Values{"path": {"/secret/token"}})
		if err != nil {
			return err
		}
		if got != "rotated-value" {
			return fmt.Errorf("the volume still holds the old value")
		}
		return nil
	})
}

// checkMetricsAuthorization: eso's /metrics, over HTTPS through its Service
// (kube-proxy), answers a Pod whose ServiceAccount is bound to
// <release>-metrics-reader and refuses one that is not.
func checkMetricsAuthorization(t *testing.T, ctx context.Context) {
	t.Helper()
	ns := "monitoring"
	apply(t, `apiVersion: v1
kind: Namespace
metadata: {name: `+ns+`}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: scraper, namespace: `+ns+`}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: stranger, namespace: `+ns+`}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: e2e-scraper-reads-eso-metrics}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: `+esoRelease+`-metrics-reader}
subjects:
- {kind: ServiceAccount, name: scraper, namespace: `+ns+`}
`)
	apply(t, workloadPod(ns, "scraper", "scraper", "", ""))
	apply(t, workloadPod(ns, "stranger", "stranger", "", ""))
	svc, err := cluster.Client.CoreV1().Services(esoNamespace).Get(ctx, esoRelease+"-metrics", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	metrics := fmt.Sprintf("https://%s:%d/metrics", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
	for pod, want := range map[string]string{"scraper": "200", "stranger": "403"} {
		ip := podIP(t, ns, pod)
		var got string
		eventually(t, time.Minute, pod+" scraping "+metrics, func() error {
			var err error
			got, err = ask(ip, "/fetch", url.Values{"url": {metrics}})
			return err
		})
		if got != want {
			t.Errorf("%s scraping eso's metrics through its Service: HTTP %s, want %s", pod, got, want)
		}
	}
}
