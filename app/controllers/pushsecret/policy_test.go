package pushsecret

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/stores"
)

func TestCheckPolicy(t *testing.T) {
	store := func(kind string, policy *ssv2.PushPolicy) *pushStore {
		return &pushStore{target: target{Kind: kind, Name: "s"},
			store: &stores.Store{Kind: kind, Name: "s", Spec: &ssv2.SecretStoreSpec{PushPolicy: policy}}}
	}
	entries := func(keys ...string) map[string]entry {
		out := map[string]entry{}
		for _, k := range keys {
			out[k] = entry{data: dataEntry("k", k, "")}
		}
		return out
	}
	adopt := esv1alpha1.PushSecretSpec{AdoptionPolicy: esv1alpha1.AdoptionPolicyAdopt}
	del := esv1alpha1.PushSecretSpec{DeletionPolicy: esv1alpha1.DeletionPolicyDelete}
	cases := []struct {
		name    string
		spec    esv1alpha1.PushSecretSpec
		store   *pushStore
		entries map[string]entry
		refused bool
	}{
		{"a SecretStore allows adoption by default", adopt, store(stores.KindSecretStore, nil), nil, false},
		{"a ClusterSecretStore refuses adoption by default", adopt, store(stores.KindClusterSecretStore, nil), nil, true},
		{"unless its admin allows it", adopt, store(stores.KindClusterSecretStore, &ssv2.PushPolicy{Adoption: ssv2.Allowed}), nil, false},
		{"a SecretStore may refuse adoption", adopt, store(stores.KindSecretStore, &ssv2.PushPolicy{Adoption: ssv2.Refused}), nil, true},
		{"deletion is allowed by default", del, store(stores.KindClusterSecretStore, nil), nil, false},
		{"deletion refused", del, store(stores.KindClusterSecretStore, &ssv2.PushPolicy{Deletion: ssv2.Refused}), nil, true},
		{"keys under the namespace's prefix", esv1alpha1.PushSecretSpec{},
			store(stores.KindClusterSecretStore, &ssv2.PushPolicy{RemoteKeyPrefix: "teams/{namespace}/"}), entries("teams/team-a/x", "teams/team-a/y"), false},
		{"a key under another namespace's prefix", esv1alpha1.PushSecretSpec{},
			store(stores.KindClusterSecretStore, &ssv2.PushPolicy{RemoteKeyPrefix: "teams/{namespace}/"}), entries("teams/team-a/x", "teams/team-b/x"), true},
		{"a second spelling of a key through a ClusterSecretStore", esv1alpha1.PushSecretSpec{},
			store(stores.KindClusterSecretStore, nil), entries("shared//db"), true},
		{"a trailing slash", esv1alpha1.PushSecretSpec{}, store(stores.KindClusterSecretStore, nil), entries("shared/db/"), true},
		{"an ARN", esv1alpha1.PushSecretSpec{}, store(stores.KindClusterSecretStore, nil), entries("arn:aws:secretsmanager:eu-west-1:1:secret:db"), true},
		{"a plain key", esv1alpha1.PushSecretSpec{}, store(stores.KindClusterSecretStore, nil), entries("shared/db"), false},
		{"a key that only looks like the prefix", esv1alpha1.PushSecretSpec{},
			store(stores.KindClusterSecretStore, &ssv2.PushPolicy{RemoteKeyPrefix: "{namespace}/"}), entries("team-a-evil/x"), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "p"}, Spec: tc.spec}
			err := checkPolicy(ps, tc.store, tc.entries)
			if refused := errors.Is(err, errRefusedByStore); refused != tc.refused {
				t.Errorf("checkPolicy: %v, want refused %v", err, tc.refused)
			}
			if tc.refused && reasonOf(err) != esv1alpha1.ReasonRefusedByStore {
				t.Errorf("reason %s", reasonOf(err))
			}
		})
	}
}

// TestClusterKeysAreIndexedFromStatus: only what eso recorded pushing
// through a ClusterSecretStore names a PushSecret as a remote key's holder;
// the first created holds it.
func TestClusterKeysAreIndexedFromStatus(t *testing.T) {
	ps := &esv1alpha1.PushSecret{Status: esv1alpha1.PushSecretStatus{SyncedPushSecrets: esv1alpha1.SyncedPushSecretsMap{
		"ClusterSecretStore/shared": {"k/a": dataEntry("x", "k", "a"), "k/b": dataEntry("y", "k", "b")},
		"SecretStore/own":           {"mine": dataEntry("z", "mine", "")},
	}}}
	got := clusterKeyIndexValues(ps)
	if len(got) != 1 || got[0] != clusterKey("ClusterSecretStore/shared", "k") {
		t.Errorf("index values %q", got)
	}
	early := &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "p", CreationTimestamp: metav1.NewTime(time.Unix(100, 0))}}
	late := &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p", CreationTimestamp: metav1.NewTime(time.Unix(200, 0))}}
	tie := &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p", CreationTimestamp: metav1.NewTime(time.Unix(100, 0))}}
	if !precedes(early, late) || precedes(late, early) || !precedes(tie, early) || precedes(early, tie) {
		t.Error("precedence is not by creation, then namespace and name")
	}
}
