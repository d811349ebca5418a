package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// The PushSecret parity table: behaviours upstream External Secrets
// Operator's own controller tests (v2.9.0) define for PushSecrets and
// ClusterPushSecrets, each run through eso against a real API server with
// the Fake provider. Each row names the upstream test it follows
// (pkg/controllers/pushsecret/pushsecret_controller_test.go, "ps"; and
// pkg/controllers/clusterpushsecret/clusterpushsecret_controller_test.go,
// "cps"). Where eso deliberately differs, the README's "Differences from
// upstream ESO" says so.

// parityRow is one upstream-defined behaviour.
type parityRow struct {
	upstream string
	run      func(t *testing.T, ns string)
}

func TestPushSecretParity(t *testing.T) {
	runEso(t, testConfig())
	rows := map[string]parityRow{
		"IfNotExists: a key the source lacks holds nothing else back": {
			upstream: `ps: "should only update parts of secret that don't already exist if UpdatePolicy=IfNotExists", "should update the PushSecret status correctly if UpdatePolicy=IfNotExists"`,
			run:      missingKeyWithIfNotExists,
		},
		"Replace: a key the source lacks is Errored": {
			upstream: `ps: "should fail if Secret Key does not exist"`,
			run:      missingKeyWithReplace,
		},
		"a store reference with name and labelSelector selects by labels": {
			upstream: `ps: "should sync to stores matching labels"`,
			run:      nameBesideLabelSelector,
		},
		"no store selected: no condition": {
			upstream: `ps: "should not sync to SecretStore in different namespace"`,
			run:      noStoreSelected,
		},
		"dataTo naming a store secretStoreRefs does not name": {
			upstream: `ps: "should fail with dataTo storeRef not in secretStoreRefs"`,
			run: dataToRefused(func(ps *esv1alpha1.PushSecret) {
				ps.Spec.DataTo = []esv1alpha1.PushSecretDataTo{{StoreRef: &esv1alpha1.PushSecretStoreRef{Name: "non-existent-store"}}}
			}),
		},
		"dataTo naming a store when secretStoreRefs only selects by labels": {
			upstream: `ps: "should fail with named dataTo storeRef when secretStoreRefs only has labelSelector"`,
			run: dataToRefused(func(ps *esv1alpha1.PushSecret) {
				ps.Spec.SecretStoreRefs = []esv1alpha1.PushSecretStoreRef{{LabelSelector: selectLabels("env", "staging")}}
				ps.Spec.DataTo = []esv1alpha1.PushSecretDataTo{{StoreRef: &esv1alpha1.PushSecretStoreRef{Name: "totally-nonexistent-store"}}}
			}),
		},
		"dataTo selecting none of the stores found": {
			upstream: `ps: "should fail with dataTo labelSelector matching no resolved store"`,
			run: dataToRefused(func(ps *esv1alpha1.PushSecret) {
				ps.Spec.SecretStoreRefs = []esv1alpha1.PushSecretStoreRef{{LabelSelector: selectLabels("env", "staging")}}
				ps.Spec.DataTo = []esv1alpha1.PushSecretDataTo{{StoreRef: &esv1alpha1.PushSecretStoreRef{LabelSelector: selectLabels("env", "production")}}}
			}),
		},
		"Fake: a property push stores the value as is": {
			upstream: `providers/v1/fake/fake.go PushSecret; ps: "should delete secrets with properties and update status correctly"`,
			run:      fakePropertyPush,
		},
		"ClusterPushSecret: its PushSecrets carry exactly pushSecretMetadata's labels": {
			upstream: `cps: "Should update push secret if the fields change" (labels compared with Equal)`,
			run:      clusterPushSecretLabels,
		},
		"ClusterPushSecret: a PushSecret it does not own fails its namespace": {
			upstream: `cps: "Should not overwrite existing push secrets and error out if one is present"`,
			run:      clusterPushSecretForeignChild,
		},
	}
	for name, row := range rows {
		t.Run(name, func(t *testing.T) {
			t.Logf("upstream: %s", row.upstream)
			row.run(t, env.Namespace(t, "push-parity", nil))
		})
	}
}

// Upstream's fixture names: store "test-store", Secret "test-secret".
const (
	parityStore  = "test-store"
	paritySecret = "test-secret"
)

// fakeStore creates a Fake configuration and a SecretStore of that name,
// labelled, and waits for it.
func fakeStore(t *testing.T, ns, name string, labels map[string]string) {
	t.Helper()
	store := secretStore(ns, name, storeSpec("Fake", name, ""))
	store.Labels = labels
	create(t, fakeConfig(ns, name, nil), store)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
}

// readPushed reads remote keys of store through an ExternalSecret refreshing
// every second, and waits until they hold want (Secret key → value).
func readPushed(t *testing.T, ns, name, store string, remoteKeys, want map[string]string) {
	t.Helper()
	refs := map[string]esv1.ExternalSecretDataRemoteRef{}
	for k, remote := range remoteKeys {
		refs[k] = ref(remote, "")
	}
	es := externalSecret(ns, name, "SecretStore", store, refs)
	es.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second}
	create(t, es)
	waitSecretData(t, ns, name, want)
}

func selectLabels(k, v string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
}

func missingKeyWithIfNotExists(t *testing.T, ns string) {
	fakeStore(t, ns, parityStore, nil)
	src := plainSecret(ns, paritySecret, map[string]string{"key": "value"})
	create(t, src)
	ps := pushSecret(ns, "test-ps", paritySecret, []string{parityStore},
		pushed("key", "path/to/key", ""), pushed("other-key", "path/to/other-key", ""))
	ps.Spec.UpdatePolicy = esv1alpha1.UpdatePolicyIfNotExists
	create(t, ps)
	// The entry whose key is there is pushed; the other is reported.
	readPushed(t, ns, "read-key", parityStore, map[string]string{"key": "path/to/key"}, map[string]string{"key": "value"})
	if msg := waitReady(t, ps, metav1.ConditionFalse, esv1alpha1.ReasonErrored); !strings.Contains(msg, `"other-key"`) {
		t.Errorf("Ready message %q does not name the missing key", msg)
	}
	// The key appears (and the pushed one changes): only what does not
	// exist is pushed, and both are recorded.
	src.Data = map[string][]byte{"key": []byte("new-value"), "other-key": []byte("other-value")}
	if err := env.Client.Update(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	readPushed(t, ns, "read-both", parityStore, map[string]string{"key": "path/to/key", "other-key": "path/to/other-key"},
		map[string]string{"key": "value", "other-key": "other-value"})
	msg := waitReady(t, ps, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
	if want := "PushSecret synced successfully. Existing secrets in providers unchanged."; msg != want {
		t.Errorf("Ready message %q, want upstream's %q", msg, want)
	}
	held := ps.Status.SyncedPushSecrets["SecretStore/"+parityStore]
	if _, ok := held["path/to/key"]; !ok {
		t.Errorf("syncedPushSecrets %v: path/to/key is not recorded", ps.Status.SyncedPushSecrets)
	}
	if _, ok := held["path/to/other-key"]; !ok {
		t.Errorf("syncedPushSecrets %v: path/to/other-key is not recorded", ps.Status.SyncedPushSecrets)
	}
}

func missingKeyWithReplace(t *testing.T, ns string) {
	fakeStore(t, ns, parityStore, nil)
	create(t, plainSecret(ns, paritySecret, map[string]string{"key": "value"}))
	ps := pushSecret(ns, "test-ps", paritySecret, []string{parityStore}, pushed("unexisting", "path/to/key", ""))
	create(t, ps)
	if msg := waitReady(t, ps, metav1.ConditionFalse, esv1alpha1.ReasonErrored); !strings.Contains(msg, `"unexisting"`) {
		t.Errorf("Ready message %q does not name the missing key", msg)
	}
}

func nameBesideLabelSelector(t *testing.T, ns string) {
	fakeStore(t, ns, parityStore, nil)
	fakeStore(t, ns, "labelled", map[string]string{"foo": "bar"})
	create(t, plainSecret(ns, paritySecret, map[string]string{"key": "value"}))
	ps := pushSecret(ns, "test-ps", paritySecret, nil, pushed("key", "path/to/key", ""))
	ps.Spec.SecretStoreRefs = []esv1alpha1.PushSecretStoreRef{{Name: parityStore, Kind: "SecretStore", LabelSelector: selectLabels("foo", "bar")}}
	create(t, ps)
	if msg := waitReady(t, ps, metav1.ConditionTrue, esv1alpha1.ReasonSynced); msg != "PushSecret synced successfully" {
		t.Errorf("Ready message %q", msg)
	}
	if _, ok := ps.Status.SyncedPushSecrets["SecretStore/labelled"]; !ok || len(ps.Status.SyncedPushSecrets) != 1 {
		t.Errorf("pushed to %v, want only the labelled store", slices.Sorted(maps.Keys(ps.Status.SyncedPushSecrets)))
	}
	readPushed(t, ns, "read", "labelled", map[string]string{"key": "path/to/key"}, map[string]string{"key": "value"})
}

func noStoreSelected(t *testing.T, ns string) {
	other := env.Namespace(t, "push-parity-other", nil)
	fakeStore(t, other, "other-ns-store", map[string]string{"foo": "bar"})
	create(t, plainSecret(ns, paritySecret, map[string]string{"key": "value"}))
	ps := pushSecret(ns, "test-ps", paritySecret, nil, pushed("key", "path/to/key", ""))
	ps.Spec.SecretStoreRefs = []esv1alpha1.PushSecretStoreRef{{Kind: "SecretStore", LabelSelector: selectLabels("foo", "bar")}}
	create(t, ps)
	consistently(t, 3*time.Second, "no condition on a PushSecret that selects no store", func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(ps), ps); err != nil {
			return err
		}
		if len(ps.Status.Conditions) != 0 || len(ps.Status.SyncedPushSecrets) != 0 {
			return fmt.Errorf("status %+v", ps.Status)
		}
		return nil
	})
}

// dataToRefused: a PushSecret whose dataTo edit makes it refer to stores
// wrongly is Ready=False, Errored.
func dataToRefused(edit func(*esv1alpha1.PushSecret)) func(t *testing.T, ns string) {
	return func(t *testing.T, ns string) {
		fakeStore(t, ns, parityStore, map[string]string{"env": "staging"})
		create(t, plainSecret(ns, paritySecret, map[string]string{"key1": "value1"}))
		ps := pushSecret(ns, "test-ps", paritySecret, []string{parityStore})
		edit(ps)
		create(t, ps)
		msg := waitReady(t, ps, metav1.ConditionFalse, esv1alpha1.ReasonErrored)
		if !strings.Contains(msg, "dataTo[0]") {
			t.Errorf("Ready message %q does not name the entry", msg)
		}
	}
}

func fakePropertyPush(t *testing.T, ns string) {
	fakeStore(t, ns, parityStore, nil)
	create(t, plainSecret(ns, paritySecret, map[string]string{"key": "value"}))
	create(t, pushSecret(ns, "test-ps", paritySecret, []string{parityStore}, pushed("key", "path/to/key", "field1")))
	readPushed(t, ns, "read", parityStore, map[string]string{"key": "path/to/key"}, map[string]string{"key": "value"})
}

// clusterPushSecret selects namespace ns by its name label and pushes Secret
// test-secret there, as PushSecret "test-ps".
func clusterPushSecret(ns string, metadata esv1alpha1.PushSecretMetadata) *esv1alpha1.ClusterPushSecret {
	spec := pushSecret("", "", paritySecret, []string{parityStore}, pushed("key", "path/to/key", "")).Spec
	return &esv1alpha1.ClusterPushSecret{ObjectMeta: metav1.ObjectMeta{Name: "cps-" + ns}, Spec: esv1alpha1.ClusterPushSecretSpec{
		PushSecretName:     "test-ps",
		PushSecretMetadata: metadata,
		NamespaceSelectors: []*metav1.LabelSelector{selectLabels("kubernetes.io/metadata.name", ns)},
		PushSecretSpec:     spec,
	}}
}

func createClusterPushSecret(t *testing.T, cps *esv1alpha1.ClusterPushSecret) {
	t.Helper()
	create(t, cps)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), cps) })
}

func clusterPushSecretLabels(t *testing.T, ns string) {
	fakeStore(t, ns, parityStore, nil)
	create(t, plainSecret(ns, paritySecret, map[string]string{"key": "value"}))
	labels := map[string]string{"test-label-key": "test-label-value"}
	createClusterPushSecret(t, clusterPushSecret(ns, esv1alpha1.PushSecretMetadata{Labels: labels}))
	child := &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "test-ps"}}
	waitReady(t, child, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
	if !maps.Equal(child.Labels, labels) {
		t.Errorf("the PushSecret's labels are %v, want exactly %v", child.Labels, labels)
	}
}

func clusterPushSecretForeignChild(t *testing.T, ns string) {
	fakeStore(t, ns, parityStore, nil)
	create(t, plainSecret(ns, paritySecret, map[string]string{"key": "value"}))
	theirs := pushSecret(ns, "test-ps", paritySecret, []string{parityStore})
	create(t, theirs)
	cps := clusterPushSecret(ns, esv1alpha1.PushSecretMetadata{})
	createClusterPushSecret(t, cps)
	waitReady(t, cps, metav1.ConditionFalse, esv1.ReasonNamespacesFailed)
	want := []esv1alpha1.ClusterPushSecretNamespaceFailure{{Namespace: ns, Reason: "push secret already exists in namespace"}}
	if len(cps.Status.FailedNamespaces) != 1 || cps.Status.FailedNamespaces[0] != want[0] {
		t.Errorf("failedNamespaces %+v, want %+v", cps.Status.FailedNamespaces, want)
	}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(theirs), theirs); err != nil || metav1.GetControllerOf(theirs) != nil {
		t.Errorf("the tenant's PushSecret was taken over: %v, %+v", err, theirs.OwnerReferences)
	}
	if c := meta.FindStatusCondition(cps.Status.Conditions, "Ready"); c == nil || c.Message == "" {
		t.Errorf("Ready %+v says nothing", c)
	}
}
