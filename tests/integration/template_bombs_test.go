package integration

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// TestTemplateBombsStopThemselvesNotEso: a tenant's ExternalSecrets whose
// templates would allocate gigabytes or never end each fail with a
// TemplateError naming the render budget, while an ordinary ExternalSecret
// created after them still syncs, and eso's heap grows by far less than a
// single bomb would take (the bound is --concurrent × 9 MiB, see
// SECURITY.md).
func TestTemplateBombsStopThemselvesNotEso(t *testing.T) {
	ctx := context.Background()
	runEso(t, testConfig())
	ns := env.Namespace(t, "bombs", nil)
	create(t, fakeConfig(ns, "values", map[string]string{"v": "x"}), secretStore(ns, "fake", storeSpec("Fake", "values", "")))

	bombs := map[string]string{
		"repeat":    `{{ repeat 4096 (repeat 4096 (repeat 4096 "x")) }}`,
		"indent":    `{{ $x := indent 4096 (indent 4096 (indent 4096 (repeat 4096 "\n"))) }}`,
		"replace":   `{{ $x := replace "" (repeat 4096 "y") (replace "" (repeat 4096 "y") (repeat 4096 "x")) }}`,
		"ranges":    `{{ $l := splitList "" (repeat 4096 "x") }}{{ range $l }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}{{ end }}`,
		"recursion": `{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}`,
		"doubling":  `{{ $s := .v }}{{ range 64 }}{{ $s = cat $s $s }}{{ end }}{{ $s }}`,
	}
	var baseline runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&baseline)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()

	var bombed []*esv1.ExternalSecret
	for name, text := range bombs {
		es := externalSecret(ns, "bomb-"+name, "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"v": ref("v", "")})
		es.Spec.Target.Template = &esv1.ExternalSecretTemplate{Data: map[string]string{"out": text}}
		create(t, es)
		bombed = append(bombed, es)
	}
	ordinary := externalSecret(ns, "ordinary", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"v": ref("v", "")})
	create(t, ordinary)
	waitSecretData(t, ns, "ordinary", map[string]string{"v": "x"})

	for _, es := range bombed {
		eventually(t, es.Name+" fails on its budget", func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
				return err
			}
			for _, c := range es.Status.Conditions {
				if c.Type == esv1.ConditionSynced && c.Status == metav1.ConditionFalse && c.Reason == esv1.ReasonTemplateError &&
					strings.Contains(c.Message, "budget") {
					return nil
				}
			}
			return fmt.Errorf("conditions %+v, want Ready=False/%s naming the budget", es.Status.Conditions, esv1.ReasonTemplateError)
		})
		if secretExists(t, ns, es.Name) {
			t.Errorf("%s: a Secret was written", es.Name)
		}
	}
	close(stop)
	<-sampled

	// Six bombs rendered at once may hold 6 × 9 MiB; the rest of eso and the
	// test's own objects a few tens of MiB more. One bomb unbounded takes
	// gigabytes.
	const allowed = 256 << 20
	if grew := int64(peak.Load()) - int64(baseline.HeapAlloc); grew > allowed {
		t.Errorf("eso's heap grew by %d MiB while rendering the bombs, more than %d MiB", grew>>20, allowed>>20)
	} else {
		t.Logf("heap grew by at most %d MiB while rendering the bombs", max(grew, 0)>>20)
	}
}
