package integration

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/metrics"
	"github.com/eso-dev/eso/tests/testenv"
)

// TestFailingObjectLogsOnlyItsStateChanges: an ExternalSecret whose
// provider process is unreachable is retried with backoff for a minute; at
// the default level eso logs one line about it when it turns not Ready,
// not one per retry, and no stack traces.
func TestFailingObjectLogsOnlyItsStateChanges(t *testing.T) {
	logged := testenv.CaptureInfoLogs(t)
	cfg := testConfig()
	cfg.RemoteProvidersInsecure = true
	runEso(t, cfg)
	ns := env.Namespace(t, "noisy", nil)
	store := secretStore(ns, "down", storeSpec("Fake", "demo", ""))
	store.Spec.ProviderConfig.Address = freeAddr(t) // nobody listens
	es := externalSecret(ns, "noisy-app", "SecretStore", "down", map[string]esv1.ExternalSecretDataRemoteRef{"pw": ref("db", "")})
	create(t, store, es)
	waitReady(t, es, metav1.ConditionFalse, esv1.ReasonSecretSyncedError)

	// Let the retries pile up.
	const window = time.Minute
	time.Sleep(window)
	retries := metrics.SyncErrors.Value(es.Name, ns)
	if retries < 5 {
		t.Fatalf("%v retries in %v: the test needs a retrying object", retries, window)
	}
	var lines []string
	for _, line := range strings.Split(logged(), "\n") {
		if strings.Contains(line, "noisy-app") {
			lines = append(lines, line)
		}
	}
	if len(lines) > 2 {
		t.Errorf("%d lines about one failing ExternalSecret (%v retries) at the default level, want at most 2:\n%s",
			len(lines), retries, strings.Join(lines, "\n"))
	}
	for _, line := range lines {
		if strings.Contains(line, "stacktrace") {
			t.Errorf("a stack trace for an expected error: %s", line)
		}
	}
}
