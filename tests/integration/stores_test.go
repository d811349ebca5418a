package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// TestStoreReadiness covers the Ready reasons of a SecretStore.
func TestStoreReadiness(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "readiness", nil)
	other := env.Namespace(t, "readiness-other", nil)
	create(t, fakeConfig(other, "fake", map[string]string{"k": "v"}))

	notCompiled := secretStore(ns, "not-compiled", storeSpec("AzureKeyVault", "x", ""))
	missing := secretStore(ns, "missing", storeSpec("Fake", "later", ""))
	crossNS := secretStore(ns, "cross-ns", storeSpec("Fake", "fake", other))
	remote := secretStore(ns, "remote", storeSpec("Fake", "later", ""))
	remote.Spec.ProviderConfig.Address = "eso-provider.eso-system.svc:8443"
	create(t, notCompiled, missing, crossNS, remote)

	msg := waitReady(t, notCompiled, metav1.ConditionFalse, ssv2.ReasonProviderNotCompiledIn)
	if !strings.Contains(msg, "AzureKeyVault") {
		t.Errorf("ProviderNotCompiledIn message does not name the kind: %q", msg)
	}
	waitReady(t, missing, metav1.ConditionFalse, ssv2.ReasonProviderRefNotFound)
	waitReady(t, crossNS, metav1.ConditionFalse, ssv2.ReasonCrossNamespaceRefused)
	waitReady(t, remote, metav1.ConditionFalse, ssv2.ReasonRemoteProviderNotEnabled)

	// The missing configuration appears: the store turns Ready without waiting
	// for its refresh interval.
	create(t, fakeConfig(ns, "later", map[string]string{"k": "v"}))
	waitReady(t, missing, metav1.ConditionTrue, ssv2.ReasonValid)

	// An invalid configuration is reported as such.
	bad := &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dup"}, Spec: provv1.FakeSpec{Data: []provv1.FakeSecret{
		{Key: "k", Value: "1"}, {Key: "k", Value: "2"},
	}}}
	invalid := secretStore(ns, "invalid", storeSpec("Fake", "dup", ""))
	create(t, bad, invalid)
	waitReady(t, invalid, metav1.ConditionFalse, ssv2.ReasonInvalidProviderConfig)
}

// TestNamespacedStoreNeverReadsAnotherNamespace tries, through a SecretStore,
// to use a provider configuration of another namespace and to read another
// namespace's Secrets with eso's own identity. Both are refused and nothing is
// written, even with gating disabled.
func TestNamespacedStoreNeverReadsAnotherNamespace(t *testing.T) {
	runEso(t, testConfig())
	tenant := env.Namespace(t, "tenant", nil)
	victim := env.Namespace(t, "victim", nil)
	create(t,
		plainSecret(victim, "crown-jewels", map[string]string{"key": "top-secret"}),
		fakeConfig(victim, "fake", map[string]string{"k": "victim-value"}),
		&provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "peek"},
			Spec: provv1.KubernetesSpec{RemoteNamespace: victim}},
	)

	viaConfig := secretStore(tenant, "via-config", storeSpec("Fake", "fake", victim))
	viaConfig.Spec.GatingPolicy = ssv2.GatingDisabled
	viaKubernetes := secretStore(tenant, "via-kubernetes", storeSpec("Kubernetes", "peek", ""))
	viaKubernetes.Spec.GatingPolicy = ssv2.GatingDisabled
	create(t, viaConfig, viaKubernetes)
	waitReady(t, viaConfig, metav1.ConditionFalse, ssv2.ReasonCrossNamespaceRefused)
	waitReady(t, viaKubernetes, metav1.ConditionFalse, ssv2.ReasonCrossNamespaceRefused)

	esConfig := externalSecret(tenant, "steal-config", "SecretStore", "via-config",
		map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	esKubernetes := externalSecret(tenant, "steal-secret", "SecretStore", "via-kubernetes",
		map[string]esv1.ExternalSecretDataRemoteRef{"key": ref("crown-jewels", "key")})
	create(t, esConfig, esKubernetes)
	for _, es := range []*esv1.ExternalSecret{esConfig, esKubernetes} {
		msg := waitReady(t, es, metav1.ConditionFalse, esv1.ReasonStoreNotAllowed)
		if strings.Contains(msg, "top-secret") || strings.Contains(msg, "victim-value") {
			t.Errorf("refusal message leaks a value: %q", msg)
		}
		if secretExists(t, tenant, es.Name) {
			t.Errorf("%s: a Secret was written through a refused store", es.Name)
		}
	}
}

// TestGatingPolicy: with gating Enabled an ExternalSecret waits for its store;
// once the store is fixed it syncs without waiting for its refresh interval.
func TestGatingPolicy(t *testing.T) {
	runEso(t, testConfig())
	ctx := context.Background()
	ns := env.Namespace(t, "gating", nil)
	store := secretStore(ns, "store", storeSpec("Fake", "wrong-name", ""))
	create(t, fakeConfig(ns, "fake", map[string]string{"k": "v"}), store)
	waitReady(t, store, metav1.ConditionFalse, ssv2.ReasonProviderRefNotFound)

	es := externalSecret(ns, "app", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	create(t, es)
	waitReady(t, es, metav1.ConditionFalse, esv1.ReasonStoreNotReady)

	patch := client.MergeFrom(store.DeepCopy())
	store.Spec.ProviderConfig.ProviderRef.Name = "fake"
	if err := env.Client.Patch(ctx, store, patch); err != nil {
		t.Fatal(err)
	}
	waitSecretData(t, ns, "app", map[string]string{"k": "v"})
	waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)
}

// TestControllerClass: an eso acts only on stores of its class, and on the
// ExternalSecrets using them.
func TestControllerClass(t *testing.T) {
	cfg := testConfig()
	cfg.ControllerClass = "edge"
	runEso(t, cfg)
	ns := env.Namespace(t, "class", nil)
	mine := secretStore(ns, "mine", storeSpec("Fake", "fake", ""))
	mine.Spec.Controller = "edge"
	theirs := secretStore(ns, "theirs", storeSpec("Fake", "fake", ""))
	create(t, fakeConfig(ns, "fake", map[string]string{"k": "v"}), mine, theirs,
		externalSecret(ns, "mine", "SecretStore", "mine", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")}),
		externalSecret(ns, "theirs", "SecretStore", "theirs", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")}),
	)
	waitSecretData(t, ns, "mine", map[string]string{"k": "v"})
	waitReady(t, mine, metav1.ConditionTrue, ssv2.ReasonValid)

	time.Sleep(500 * time.Millisecond)
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(theirs), theirs); err != nil {
		t.Fatal(err)
	}
	if len(theirs.Status.Conditions) != 0 {
		t.Errorf("a store of another class got conditions: %+v", theirs.Status.Conditions)
	}
	if secretExists(t, ns, "theirs") {
		t.Errorf("an ExternalSecret of another class's store was synced")
	}
}
