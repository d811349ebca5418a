package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
	"github.com/eso-dev/eso/providers/plugin/wire"
	"github.com/eso-dev/eso/tests/faultprovider"
)

// TestV1PluginBridge: an external-secrets.io/v1 SecretStore whose
// provider.plugin block points at a provider process (eso's provider-mode
// server with the Fake provider, behind mTLS with a client certificate
// Secret) is Ready, and an ExternalSecret written as upstream writes it (no
// secretStoreRef.apiVersion) syncs through it. The bridge forwards rather
// than serving in process: a changed configuration reaches the Secret
// through the provider process, and while that process is unreachable the
// ExternalSecret says so and the Secret stays exactly as it was, until the
// process is back. A v1 plugin SecretStore naming a configuration, or a
// client certificate, of another namespace is refused.
func TestV1PluginBridge(t *testing.T) {
	fp := faultprovider.Start(t, providerProcess(t))
	runEso(t, testConfig())

	ns := env.Namespace(t, "v1-plugin", nil)
	create(t, fp.ClientSecret(t, ns, "core-tls", "eso-core"),
		fakeConfig(ns, "demo", map[string]string{"db": `{"user":"app","password":"from-the-provider-process"}`}))
	applyYAML(t, ns, fmt.Sprintf(`
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: bridge}
spec:
  provider:
    plugin:
      address: %q
      auth: {clientCertificate: {name: core-tls}}
      providerRef: {kind: Fake, name: demo}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: app}
spec:
  refreshInterval: 1h
  secretStoreRef: {name: bridge, kind: SecretStore}
  target: {name: app}
  data:
    - secretKey: pw
      remoteRef: {key: db, property: password}
  dataFrom:
    - extract: {key: db}
`, fp.Addr()))
	store := &v1stores.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bridge"}}
	if msg := waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid); strings.Contains(msg, "from-the-provider-process") {
		t.Errorf("the store's condition holds a value: %s", msg)
	}
	es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}}
	waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)
	if es.Spec.SecretStoreRef == nil || es.Spec.SecretStoreRef.APIVersion != "" {
		t.Fatalf("the ExternalSecret is not as upstream writes it: secretStoreRef %+v", es.Spec.SecretStoreRef)
	}
	waitSecretData(t, ns, "app", map[string]string{"pw": "from-the-provider-process", "user": "app", "password": "from-the-provider-process"})

	// The provider process reads the configuration: a new value reaches the
	// Secret with the next sync.
	demo := fakeConfig(ns, "demo", nil)
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(demo), demo); err != nil {
		t.Fatal(err)
	}
	demo.Spec.Data = fakeConfig(ns, "demo", map[string]string{"db": `{"user":"app","password":"rotated-value"}`}).Spec.Data
	if err := env.Client.Update(t.Context(), demo); err != nil {
		t.Fatal(err)
	}
	attempt := 0
	synced := waitSecretDataWhile(t, ns, "app", map[string]string{"pw": "rotated-value", "user": "app", "password": "rotated-value"}, func() {
		attempt++
		annotate(t, es, "force-sync", fmt.Sprint("rotation-", attempt))
	})

	// Without the provider process nothing syncs: the bridge does not fall
	// back to the in-process Fake provider.
	fp.Disconnect()
	annotate(t, es, "force-sync", "outage")
	msg := waitReady(t, es, metav1.ConditionFalse, esv1.ReasonSecretSyncedError)
	if !strings.Contains(msg, wire.ErrUnavailable.Error()) || strings.Contains(msg, "rotated-value") {
		t.Errorf("the ExternalSecret's condition during the outage: %s", msg)
	}
	requireUnchanged(t, synced)
	consistently(t, 2*time.Second, "the Secret during the outage", func() error {
		requireUnchanged(t, synced)
		return nil
	})

	fp.Reconnect(t)
	annotate(t, es, "force-sync", "recovered")
	waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
	requireUnchanged(t, synced)

	// A v1 plugin SecretStore reads only its own namespace: neither its
	// configuration nor its client certificate may be another namespace's.
	other := env.Namespace(t, "v1-plugin-other", nil)
	create(t, fakeConfig(other, "demo", map[string]string{"db": `{"password":"other-namespace"}`}),
		fp.ClientSecret(t, other, "core-tls", "eso-core"))
	applyYAML(t, ns, fmt.Sprintf(`
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: cross-config}
spec:
  provider:
    plugin:
      address: %[1]q
      auth: {clientCertificate: {name: core-tls}}
      providerRef: {kind: Fake, name: demo, namespace: %[2]s}
---
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: cross-certificate}
spec:
  provider:
    plugin:
      address: %[1]q
      auth: {clientCertificate: {name: core-tls, namespace: %[2]s}}
      providerRef: {kind: Fake, name: demo}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: cross}
spec:
  refreshInterval: 1h
  secretStoreRef: {name: cross-config, kind: SecretStore}
  target: {name: cross}
  data:
    - secretKey: pw
      remoteRef: {key: db, property: password}
`, fp.Addr(), other))
	msg = waitReady(t, &v1stores.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cross-config"}},
		metav1.ConditionFalse, ssv2.ReasonInvalidProviderConfig)
	if !strings.Contains(msg, "spec.provider.plugin.providerRef.namespace: a SecretStore reads only its own namespace") {
		t.Errorf("a v1 plugin SecretStore naming another namespace's configuration is not refused for it: %s", msg)
	}
	msg = waitReady(t, &v1stores.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cross-certificate"}},
		metav1.ConditionFalse, ssv2.ReasonCrossNamespaceRefused)
	if !strings.Contains(msg, "client certificate Secret must be in the object's own namespace") {
		t.Errorf("a v1 plugin SecretStore naming another namespace's client certificate: %s", msg)
	}
	waitReady(t, &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cross"}}, metav1.ConditionFalse, esv1.ReasonStoreNotReady)
	consistently(t, 2*time.Second, "no Secret through a refused store", func() error {
		if secretExists(t, ns, "cross") {
			return fmt.Errorf("synced")
		}
		return nil
	})
}

// waitSecretDataWhile is waitSecretData calling poke (say, a force-sync)
// before each look until the Secret holds want.
func waitSecretDataWhile(t *testing.T, ns, name string, want map[string]string, poke func()) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	eventually(t, "Secret "+ns+"/"+name+" to hold the expected data", func() error {
		poke()
		time.Sleep(200 * time.Millisecond)
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
			return err
		}
		for k, v := range want {
			if string(s.Data[k]) != v {
				return fmt.Errorf("key %s differs", k)
			}
		}
		if len(s.Data) != len(want) {
			return fmt.Errorf("has keys %v", keys(s.Data))
		}
		return nil
	})
	return &s
}
