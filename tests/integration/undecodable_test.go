package integration

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// withoutRefreshIntervalRules drops the schema rules of spec.refreshInterval
// from a CRD until the test ends: an object stored before those rules
// existed, which is what an upgraded cluster may hold.
func withoutRefreshIntervalRules(t *testing.T, crdName string) {
	t.Helper()
	ctx := context.Background()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	if err := env.Client.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
		t.Fatal(err)
	}
	original, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	versions := make([]any, len(original))
	for i, v := range original {
		v := runtimeDeepCopy(v).(map[string]any)
		path := []string{"schema", "openAPIV3Schema", "properties", "spec", "properties", "refreshInterval"}
		field, found, _ := unstructured.NestedMap(v, path...)
		if !found {
			versions[i] = v // a version with an open schema (v1beta1, neither served nor stored)
			continue
		}
		for _, rule := range []string{"pattern", "x-kubernetes-validations", "maxLength"} {
			delete(field, rule)
		}
		if err := unstructured.SetNestedMap(v, field, path...); err != nil {
			t.Fatal(err)
		}
		versions[i] = v
	}
	setVersions := func(vs []any) error {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
			return err
		}
		if err := unstructured.SetNestedSlice(crd.Object, vs, "spec", "versions"); err != nil {
			return err
		}
		return env.Client.Update(ctx, crd)
	}
	if err := setVersions(versions); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := setVersions(original); err != nil {
			t.Errorf("restoring CRD %s: %v", crdName, err)
		}
	})
}

func runtimeDeepCopy(v any) any {
	return (&unstructured.Unstructured{Object: map[string]any{"v": v}}).DeepCopy().Object["v"]
}

// createStale creates manifest, retrying while the API server still applies
// the rules just dropped.
func createStale(t *testing.T, ns, manifest string) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatal(err)
	}
	obj.SetNamespace(ns)
	eventually(t, "the API server to take "+obj.GetName(), func() error {
		return env.Client.Create(context.Background(), obj.DeepCopy())
	})
}

// TestUndecodableObjectsAreReportedAloneAndStopNothing: an ExternalSecret
// and a SecretStore that Go cannot decode (stored before the schema refused
// them) get Ready=False/InvalidSpec each, while every other ExternalSecret
// and store of the kind syncs, also for an eso started after they exist.
func TestUndecodableObjectsAreReportedAloneAndStopNothing(t *testing.T) {
	withoutRefreshIntervalRules(t, "externalsecrets.external-secrets.io")
	withoutRefreshIntervalRules(t, "secretstores.secretstore.external-secrets.io")
	tenant := env.Namespace(t, "undecodable", nil)
	other := env.Namespace(t, "decodable", nil)

	createStale(t, tenant, `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: banana}
spec:
  refreshInterval: banana
  secretStoreRef: {name: fake}
  data: [{secretKey: a, remoteRef: {key: k}}]`)
	createStale(t, tenant, `
apiVersion: secretstore.external-secrets.io/v2alpha1
kind: SecretStore
metadata: {name: banana}
spec:
  refreshInterval: banana
  providerConfig: {providerRef: {kind: Fake, name: f}}`)

	// eso starts after they exist, as after an upgrade.
	runEso(t, testConfig())
	store := &ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "fake"}, Spec: storeSpec("Fake", "values", "")}
	create(t, fakeConfig(other, "values", map[string]string{"k": "v"}), store,
		externalSecret(other, "app", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"a": {Key: "k"}}))
	start := time.Now()
	waitSecretData(t, other, "app", map[string]string{"a": "v"})
	t.Logf("the decodable ExternalSecret synced %s after creation", time.Since(start).Round(time.Millisecond))
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)

	badES := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "banana"}}
	if msg := waitReady(t, badES, metav1.ConditionFalse, esv1.ReasonInvalidSpec); msg == "" {
		t.Error("the undecodable ExternalSecret's condition says nothing")
	}
	waitReady(t, &ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "banana"}}, metav1.ConditionFalse, ssv2.ReasonInvalidSpec)
}
