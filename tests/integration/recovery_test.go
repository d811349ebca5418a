package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
	"github.com/eso-dev/eso/tests/faultproxy"
)

// TestVaultOutageAndRecovery: a Vault server behind a proxy stops
// answering (sealed, 503; dropped connections). The ExternalSecret says the
// provider fails, its Secret stays byte-identical, the store keeps its
// Ready verdict through the outage; once Vault answers again everything
// syncs by itself within the wait bound, without an annotation, and goes on
// refreshing.
func TestVaultOutageAndRecovery(t *testing.T) {
	root := vaulttest.Start(t)
	if _, err := root.Logical().Write("secret/data/app/db", map[string]any{"data": map[string]any{"password": "s3cr3t-value"}}); err != nil {
		t.Fatal(err)
	}
	proxy := faultproxy.Start(t, root.Address())
	runEso(t, testConfig())
	ns := env.Namespace(t, "vault-outage", nil)
	store := secretStore(ns, "vault", storeSpec("Vault", "vault", ""))
	create(t,
		plainSecret(ns, "vault-token", map[string]string{"token": vaulttest.RootToken}),
		&provv1.Vault{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault"}, Spec: provv1.VaultSpec{
			Server: proxy.URL, Path: "secret", Version: "v2",
			Auth: provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault-token", Key: "token"}}}},
		store,
	)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
	es := externalSecret(ns, "app", "SecretStore", "vault", map[string]esv1.ExternalSecretDataRemoteRef{"pw": ref("app/db", "password")})
	es.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second}
	create(t, es)
	synced := waitSecretData(t, ns, "app", map[string]string{"pw": "s3cr3t-value"})

	for _, c := range []struct {
		name  string
		fault faultproxy.Fault
	}{
		{"sealed", vaulttest.Outage(http.StatusServiceUnavailable)},
		{"dropped", faultproxy.Fault{Drop: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			failedBefore := proxy.Failed()
			proxy.Fail(c.fault)
			msg := waitReady(t, es, metav1.ConditionFalse, esv1.ReasonSecretSyncedError)
			if strings.Contains(msg, "s3cr3t-value") {
				t.Fatalf("condition shows the value: %s", msg)
			}
			if proxy.Failed() == failedBefore {
				t.Fatal("the proxy answered no request with the fault")
			}
			requireUnchanged(t, synced)
			waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
			proxy.Pass()
			waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)
			// Refreshes go on after the outage (a sync slower than the
			// interval once left the next refresh unscheduled).
			before := proxy.Requests("/v1/secret/data/app/db")
			eventually(t, "refreshes after the outage", func() error {
				if n := proxy.Requests("/v1/secret/data/app/db") - before; n < 2 {
					return fmt.Errorf("%d reads since the recovery", n)
				}
				return nil
			})
		})
	}
}
