//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestProviderMode installs charts/eso-provider beside core, with the
// certificates core issues: a store naming the provider's Service syncs
// over mTLS (through the cluster DNS and kube-proxy). With the provider's
// Pod gone, the ExternalSecret reports SecretSyncedError and its Secret
// stays as it was; with the Pod back, it recovers.
func TestProviderMode(t *testing.T) {
	ctx := context.Background()
	startCluster(t)
	root := unpackBundle(t)
	installFromBundle(t, root, "--set", "providerCertificates.namespace="+esoNamespace,
		"--set", "providerCertificates.dnsNames={eso-provider."+esoNamespace+".svc}")
	eventually(t, time.Minute, "core issued the provider's server certificate", func() error {
		_, err := cluster.Client.CoreV1().Secrets(esoNamespace).Get(ctx, "eso-provider-server-tls", metav1.GetOptions{})
		return err
	})
	charts, _ := filepath.Glob(filepath.Join(root, "charts", "eso-provider-[0-9]*.tgz"))
	if len(charts) != 1 {
		t.Fatalf("the bundle holds provider charts %v, want one", charts)
	}
	shell(t, root, "helm install eso-provider "+shellQuote(charts[0])+" --namespace "+esoNamespace+
		" --set image.airgapped=true --wait --timeout 3m")
	waitAvailable(t, esoNamespace, "app.kubernetes.io/instance=eso-provider")

	ns := "team-p"
	apply(t, `apiVersion: v1
kind: Namespace
metadata: {name: `+ns+`}
---
apiVersion: provider.secretstore.external-secrets.io/v2alpha1
kind: Fake
metadata: {name: remote, namespace: `+ns+`}
spec:
  data:
  - {key: app/token, value: served-by-the-provider}
---
apiVersion: secretstore.external-secrets.io/v2alpha1
kind: SecretStore
metadata: {name: remote, namespace: `+ns+`}
spec:
  providerConfig:
    address: eso-provider.`+esoNamespace+`.svc:8443
    providerRef: {kind: Fake, name: remote}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: app-token, namespace: `+ns+`}
spec:
  refreshInterval: 5s
  secretStoreRef: {kind: SecretStore, name: remote}
  target: {name: app-token}
  data:
  - secretKey: token
    remoteRef: {key: app/token}
`)
	waitSecretValue(t, 2*time.Minute, ns, "app-token", "token", "served-by-the-provider")
	synced := []byte("served-by-the-provider")

	kubectl(t, "-n", esoNamespace, "scale", "deployment", "eso-provider", "--replicas=0")
	eventually(t, time.Minute, "SecretSyncedError with the provider gone", func() error {
		if got := esReady(ctx, ns, "app-token"); !strings.HasPrefix(got, "False") || !strings.Contains(got, "SecretSyncedError") {
			return fmt.Errorf("ExternalSecret: %s", got)
		}
		return nil
	})
	s, err := cluster.Client.CoreV1().Secrets(ns).Get(ctx, "app-token", metav1.GetOptions{})
	if err != nil || !bytes.Equal(s.Data["token"], synced) {
		t.Fatalf("with the provider gone the Secret changed: %v", err)
	}

	kubectl(t, "-n", esoNamespace, "scale", "deployment", "eso-provider", "--replicas=1")
	eventually(t, 2*time.Minute, "Ready again with the provider back", func() error {
		if got := esReady(ctx, ns, "app-token"); !strings.HasPrefix(got, "True") {
			return fmt.Errorf("ExternalSecret: %s", got)
		}
		return nil
	})
}

// esReady describes an ExternalSecret's Ready condition: "True: reason:
// message" or "False: ...".
func esReady(ctx context.Context, ns, name string) string {
	dyn := cluster.Dynamic
	es, err := dyn.Resource(externalSecrets).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "error: " + err.Error()
	}
	ok, why := readyCondition(es)
	if ok {
		return "True: " + why
	}
	return "False: " + why
}
