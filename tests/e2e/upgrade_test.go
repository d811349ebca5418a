//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestUpgradeAndRollback: with 100 ExternalSecrets synced, `helm upgrade`
// to eso built as another version and `helm rollback` to the first keep
// every ExternalSecret Ready and write no target Secret.
func TestUpgradeAndRollback(t *testing.T) {
	ctx := context.Background()
	startCluster(t)
	root := unpackBundle(t)
	installFromBundle(t, root)
	if err := cluster.ImportImage(ctx, nextImage); err != nil {
		t.Fatal(err)
	}
	f := syncFleet(t, 100, "10s")
	rec := record(t, f.namespaces)

	chart, _ := filepath.Glob(filepath.Join(root, "charts", "eso-[0-9]*.tgz"))
	started := time.Now()
	shell(t, root, "helm upgrade "+esoRelease+" "+shellQuote(chart[0])+" --namespace "+esoNamespace+
		" --reuse-values --set-string image.tag="+shellQuote(nextTag)+" --wait --timeout 3m")
	waitRolledOut(t, ":"+nextTag)
	waitLeader(t, "")
	t.Logf("upgrade: rolled out in %s", time.Since(started).Round(100*time.Millisecond))
	settle(t, f)

	started = time.Now()
	shell(t, root, "helm rollback "+esoRelease+" 1 --namespace "+esoNamespace+" --wait --timeout 3m")
	waitRolledOut(t, "")
	waitLeader(t, "")
	t.Logf("rollback: rolled out in %s", time.Since(started).Round(100*time.Millisecond))
	settle(t, f)

	rec.check(t, nil)
	f.waitReady(t, time.Second)
}

// waitRolledOut waits until eso's only Pods run an image whose reference
// ends with suffix ("" for any but the next version) and are Ready.
func waitRolledOut(t *testing.T, suffix string) {
	t.Helper()
	ctx := context.Background()
	eventually(t, 3*time.Minute, "eso's Pods rolled out", func() error {
		pods, err := cluster.Client.CoreV1().Pods(esoNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + esoRelease})
		if err != nil {
			return err
		}
		if len(pods.Items) == 0 {
			return fmt.Errorf("no Pods")
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			image := p.Spec.Containers[0].Image
			switch {
			case p.DeletionTimestamp != nil:
				return fmt.Errorf("%s still terminating", p.Name)
			case suffix != "" && !strings.HasSuffix(image, suffix), suffix == "" && strings.HasSuffix(image, ":"+nextTag):
				return fmt.Errorf("%s runs %s", p.Name, image)
			}
			ready := false
			for _, c := range p.Status.Conditions {
				ready = ready || (c.Type == "Ready" && c.Status == "True")
			}
			if !ready {
				return fmt.Errorf("%s", podState(p))
			}
		}
		return nil
	})
}

// settle gives the eso now running two refresh intervals to touch every
// ExternalSecret: time for any write it would make to show.
func settle(t *testing.T, f *fleet) {
	t.Helper()
	d, err := time.ParseDuration(f.refresh)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2*d + 5*time.Second)
}
