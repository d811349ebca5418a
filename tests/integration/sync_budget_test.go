package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
)

// heapPeak samples the Go heap of this process (eso runs in it; the API
// server and etcd do not) until the test ends, and returns a function
// reporting the highest heap in use seen above the level at the start.
func heapPeak(t *testing.T) func() uint64 {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > base && ms.HeapInuse-base > peak.Load() {
				peak.Store(ms.HeapInuse - base)
			}
		}
	}()
	t.Cleanup(func() { close(done); <-stopped })
	return peak.Load
}

// hostileMemoryBound is what one hostile object may make eso's heap grow
// by here: one sync's worst case (SECURITY.md: about 22 MiB) with the
// garbage collector's slack, far below what the attacks took before the
// budget was the sync's.
const hostileMemoryBound = 64 << 20

// TestHostileSyncsAreBounded: what one tenant's object makes eso do is
// bounded by one budget per sync, whatever the counts it multiplies by
// (entries, stores, selected Secrets, rewritten keys); the object fails
// with a condition naming the bound, and another tenant's sync the while
// is untouched.
func TestHostileSyncsAreBounded(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "budget", nil)
	create(t, fakeConfig(ns, "fake", map[string]string{"ok": "fine"}), secretStore(ns, "fake", storeSpec("Fake", "fake", "")))
	waitReady(t, secretStore(ns, "fake", storeSpec("Fake", "fake", "")), metav1.ConditionTrue, "Valid")

	// The bystander: another tenant's PushSecret keeps syncing.
	other := env.Namespace(t, "budget-other", nil)
	create(t, fakeConfig(other, "fake", nil), secretStore(other, "fake", storeSpec("Fake", "fake", "")),
		plainSecret(other, "src", map[string]string{"password": "p"}))
	bystander := pushSecret(other, "bystander", "src", []string{"fake"}, pushed("password", "pw", ""))
	create(t, bystander)
	waitReady(t, bystander, metav1.ConditionTrue, esv1alpha1.ReasonSynced)

	t.Run("whole-Secret entries over a Secret of control bytes", func(t *testing.T) {
		peak := heapPeak(t)
		// 700 KB of \x01: 4.2 MB as JSON. Each entry without a key used to
		// get a JSON copy of its own (150 entries: eso grew by 1.4 GB).
		create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "control-bytes"},
			Data: map[string][]byte{"k": bytes.Repeat([]byte{1}, 700_000)}})
		ps := pushSecret(ns, "whole", "control-bytes", []string{"fake"})
		for i := range 150 {
			d := pushed("", fmt.Sprintf("whole-%d", i), "")
			if i%2 == 1 {
				// A second conversion strategy is a second value: 8.4 MB.
				d.ConversionStrategy = esv1alpha1.ConversionReverseUnicode
			}
			ps.Spec.Data = append(ps.Spec.Data, d)
		}
		create(t, ps)
		msg := waitReady(t, ps, metav1.ConditionFalse, esv1alpha1.ReasonErrored)
		if !strings.Contains(msg, "budget exceeded") || strings.Contains(msg, "\\u0001") {
			t.Errorf("condition %q should name the budget, and no value", msg)
		}
		if p := peak(); p > hostileMemoryBound {
			t.Errorf("eso's heap grew by %d MiB, more than %d MiB", p>>20, hostileMemoryBound>>20)
		} else {
			t.Logf("eso's heap grew by %d MiB at most", p>>20)
		}
	})

	t.Run("a template over many selected Secrets", func(t *testing.T) {
		// Each render used to get a budget of its own: 100 Secrets were
		// 100 budgets of work for one PushSecret, at every sync.
		for i := range 100 {
			s := plainSecret(ns, fmt.Sprintf("labelled-%03d", i), map[string]string{fmt.Sprintf("k%03d", i): "v"})
			s.Labels = map[string]string{"push": "many"}
			create(t, s)
		}
		ps := pushSecret(ns, "many", "", []string{"fake"})
		ps.Spec.Selector = esv1alpha1.PushSecretSelector{Secret: &esv1alpha1.PushSecretSecret{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"push": "many"}}}}
		// Labels, so that no key is in two rendered Secrets.
		ps.Spec.Template = &esv1.ExternalSecretTemplate{Metadata: esv1.ExternalSecretTemplateMetadata{
			Labels: map[string]string{"work": `{{ range until 20000 }}{{ end }}done`}}}
		ps.Spec.DataTo = []esv1alpha1.PushSecretDataTo{{StoreRef: &esv1alpha1.PushSecretStoreRef{Name: "fake", Kind: "SecretStore"},
			Match: &esv1alpha1.PushSecretDataToMatch{RegExp: "^k"}}}
		create(t, ps)
		if msg := waitReady(t, ps, metav1.ConditionFalse, esv1alpha1.ReasonErrored); !strings.Contains(msg, "budget exceeded") {
			t.Errorf("condition %q should name the budget", msg)
		}
	})

	t.Run("a rewrite transform over many keys, pushed", func(t *testing.T) {
		data := map[string][]byte{}
		for i := range 2_000 {
			data[fmt.Sprintf("key-%04d", i)] = []byte("v")
		}
		create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "many-keys"}, Data: data})
		ps := pushSecret(ns, "rewrite", "many-keys", []string{"fake"})
		ps.Spec.DataTo = []esv1alpha1.PushSecretDataTo{{StoreRef: &esv1alpha1.PushSecretStoreRef{Name: "fake", Kind: "SecretStore"},
			Rewrite: []esv1alpha1.PushSecretRewrite{{Transform: &esv1.ExternalSecretRewriteTransform{
				Template: `{{ range until 100 }}{{ end }}{{ .value }}`}}}}}
		start := time.Now()
		create(t, ps)
		if msg := waitReady(t, ps, metav1.ConditionFalse, esv1alpha1.ReasonErrored); !strings.Contains(msg, "budget exceeded") {
			t.Errorf("condition %q should name the budget", msg)
		}
		t.Logf("refused within %s", time.Since(start).Round(time.Millisecond))
	})

	t.Run("a rewrite transform over many keys, fetched", func(t *testing.T) {
		fields := map[string]string{}
		for i := range 2_000 {
			fields[fmt.Sprintf("key-%04d", i)] = "v"
		}
		raw, _ := json.Marshal(fields)
		store := secretStore(ns, "many-fields", storeSpec("Fake", "many-fields", ""))
		create(t, fakeConfig(ns, "many-fields", map[string]string{"blob": string(raw)}), store)
		waitReady(t, store, metav1.ConditionTrue, "Valid")
		es := externalSecret(ns, "rewrite", "SecretStore", "many-fields", nil)
		es.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{{Extract: &esv1.ExternalSecretDataRemoteRef{Key: "blob"},
			Rewrite: []esv1.ExternalSecretRewrite{{Transform: &esv1.ExternalSecretRewriteTransform{
				Template: `{{ range until 100 }}{{ end }}{{ .value }}`}}}}}
		create(t, es)
		if msg := waitReady(t, es, metav1.ConditionFalse, esv1.ReasonSecretSyncedError); !strings.Contains(msg, "budget exceeded") {
			t.Errorf("condition %q should name the budget", msg)
		}
	})

	// The bystander never noticed.
	waitReady(t, bystander, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
}
