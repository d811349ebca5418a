//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestNodeFaults restarts containerd, then the kubelet, while 100
// ExternalSecrets refresh every 5 s: eso comes back by itself and syncs a
// change made while the component was down, no target Secret is emptied,
// deleted or written but the changed one, and everything is Ready again
// within 60 s.
func TestNodeFaults(t *testing.T) {
	ctx := context.Background()
	startCluster(t)
	installFromBundle(t, unpackBundle(t))
	f := syncFleet(t, 100, "5s")
	rec := record(t, f.namespaces)
	allowed := map[string]int{}

	for round, fault := range []struct {
		name          string
		stop, restart func() error
	}{
		{"containerd restarted", func() error { cluster.StopContainerd(); return nil }, func() error { return cluster.StartContainerd(ctx) }},
		{"kubelet restarted", func() error { cluster.StopKubelet(); return nil }, cluster.StartKubelet},
	} {
		t.Run(fault.name, func(t *testing.T) {
			if err := fault.stop(); err != nil {
				t.Fatal(err)
			}
			ns, value := f.namespaces[round], fmt.Sprintf("changed-while-down-%d", round)
			apply(t, f.store(ns, "v1", map[int]string{0: value}))
			allowed[ns+"/es-0"]++
			time.Sleep(10 * time.Second) // two refreshes with the component down
			if err := fault.restart(); err != nil {
				t.Fatal(err)
			}
			back := time.Now()
			waitSecretValue(t, 60*time.Second, ns, "es-0", "value", value)
			f.waitReady(t, 60*time.Second-time.Since(back))
			pod := waitAvailable(t, esoNamespace, "app.kubernetes.io/instance="+esoRelease)
			t.Logf("the change synced and every ExternalSecret Ready %s after the restart; eso's Pod: %s",
				time.Since(back).Round(100*time.Millisecond), podState(pod))
		})
	}
	time.Sleep(10 * time.Second)
	rec.check(t, allowed)
}
