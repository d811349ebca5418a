package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// clusterPush is a PushSecret of ns pushing source's key to remoteKey
// through ClusterSecretStore store.
func clusterPush(ns, name, store, remoteKey string) *esv1alpha1.PushSecret {
	ps := pushSecret(ns, name, "src", nil, pushed("password", remoteKey, ""))
	ps.Spec.SecretStoreRefs = []esv1alpha1.PushSecretStoreRef{{Name: store, Kind: "ClusterSecretStore"}}
	return ps
}

// TestTenantsSharingAClusterStore: through a ClusterSecretStore every
// admitted namespace shares, one tenant neither overwrites nor deletes what
// another pushed, adopts nothing unless the admin allows it, and keeps to
// the remote keys the admin gives its namespace.
func TestTenantsSharingAClusterStore(t *testing.T) {
	runEso(t, testConfig())
	ctx := context.Background()
	admin := env.Namespace(t, "push-admin", nil)
	teamA := env.Namespace(t, "team-a", nil)
	teamB := env.Namespace(t, "team-b", nil)
	create(t, fakeConfig(admin, "shared", map[string]string{"inline": "admin's"}))
	shared := clusterStore("shared-"+admin, ssv2.ClusterSecretStoreSpec{SecretStoreSpec: storeSpec("Fake", "shared", admin)})
	create(t, shared)
	waitReady(t, shared, metav1.ConditionTrue, ssv2.ReasonValid)
	create(t, plainSecret(teamA, "src", map[string]string{"password": "a-value"}),
		plainSecret(teamB, "src", map[string]string{"password": "b-value"}))

	// team-b pushes first; its ExternalSecret reads what it pushed.
	psB := clusterPush(teamB, "mine", shared.Name, "b-key")
	create(t, psB)
	waitReady(t, psB, metav1.ConditionTrue, esv1alpha1.ReasonSynced)

	t.Run("another tenant's remote secret is neither overwritten nor deleted", func(t *testing.T) {
		psA := clusterPush(teamA, "theirs", shared.Name, "b-key")
		psA.Spec.DeletionPolicy = esv1alpha1.DeletionPolicyDelete
		create(t, psA)
		if msg := waitReady(t, psA, metav1.ConditionFalse, esv1alpha1.ReasonNotOwned); !strings.Contains(msg, "b-key") ||
			strings.Contains(msg, teamB) || strings.Contains(msg, "value") {
			t.Errorf("condition %q should name the remote key, and neither the other tenant nor a value", msg)
		}
		reader := externalSecret(teamB, "reader", "ClusterSecretStore", shared.Name, map[string]esv1.ExternalSecretDataRemoteRef{"v": ref("b-key", "")})
		create(t, reader)
		waitSecretData(t, teamB, "reader", map[string]string{"v": "b-value"})
		if err := env.Client.Delete(ctx, psA); err != nil {
			t.Fatal(err)
		}
		eventually(t, "team-a's PushSecret to be gone", func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(psA), psA); !apierrors.IsNotFound(err) {
				return err
			}
			return nil
		})
		// What team-b pushed is still there, and its PushSecret still Synced.
		again := externalSecret(teamB, "reader-again", "ClusterSecretStore", shared.Name, map[string]esv1.ExternalSecretDataRemoteRef{"v": ref("b-key", "")})
		create(t, again)
		waitSecretData(t, teamB, "reader-again", map[string]string{"v": "b-value"})
		waitReady(t, psB, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
	})

	t.Run("a store of another name over the same configuration is the same key space", func(t *testing.T) {
		twin := clusterStore("twin-"+admin, ssv2.ClusterSecretStoreSpec{SecretStoreSpec: storeSpec("Fake", "shared", admin)})
		create(t, twin)
		t.Cleanup(func() { _ = env.Client.Delete(ctx, twin) })
		waitReady(t, twin, metav1.ConditionTrue, ssv2.ReasonValid)
		ps := clusterPush(teamA, "through-twin", twin.Name, "b-key")
		create(t, ps)
		waitReady(t, ps, metav1.ConditionFalse, esv1alpha1.ReasonNotOwned)
		alias := clusterPush(teamA, "alias", twin.Name, "b-key/")
		create(t, alias)
		waitReady(t, alias, metav1.ConditionFalse, esv1alpha1.ReasonRefusedByStore)
	})

	t.Run("a prefix that would let one namespace's keys take in another's is refused", func(t *testing.T) {
		loose := clusterStore("loose-"+admin, ssv2.ClusterSecretStoreSpec{SecretStoreSpec: storeSpec("Fake", "shared", admin)})
		loose.Spec.PushPolicy = &ssv2.PushPolicy{RemoteKeyPrefix: "apps/{namespace}-"}
		if err := env.Client.Create(ctx, loose); err == nil || !strings.Contains(err.Error(), "separator") {
			t.Errorf("creating a store with remoteKeyPrefix apps/{namespace}-: %v, want a refusal", err)
		}
	})

	t.Run("a ClusterPushSecret's copies push alike; a forged owner reference holds nothing", func(t *testing.T) {
		tag := map[string]string{"push-tenancy": admin}
		selected := env.Namespace(t, "cps-selected", tag)
		create(t, plainSecret(selected, "src", map[string]string{"password": "admin-value"}))
		cps := &esv1alpha1.ClusterPushSecret{ObjectMeta: metav1.ObjectMeta{Name: "tenancy-" + admin}, Spec: esv1alpha1.ClusterPushSecretSpec{
			PushSecretName: "fanned", NamespaceSelectors: []*metav1.LabelSelector{{MatchLabels: tag}},
			PushSecretSpec: clusterPush("", "", shared.Name, "cps-key").Spec}}
		create(t, cps)
		t.Cleanup(func() { _ = env.Client.Delete(ctx, cps) })
		fanned := &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: selected, Name: "fanned"}}
		waitReady(t, fanned, metav1.ConditionTrue, esv1alpha1.ReasonSynced)

		// team-a, which the ClusterPushSecret does not select, copies its
		// owner reference onto a PushSecret of the same name. It never
		// pushes for it: it is refused, or pruned first as a copy in a
		// namespace the ClusterPushSecret does not select (the reference
		// says it is one; Kubernetes' garbage collector reads it so too).
		forged := clusterPush(teamA, "fanned", shared.Name, "cps-key")
		forged.OwnerReferences = fanned.OwnerReferences
		create(t, forged)
		eventually(t, "the forged copy to be refused or pruned", func() error {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(forged), forged)
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			switch c := meta.FindStatusCondition(forged.Status.Conditions, esv1alpha1.ConditionReady); {
			case c != nil && c.Status == metav1.ConditionTrue:
				t.Fatalf("the forged copy pushed: %+v", c)
			case c != nil && c.Reason == esv1alpha1.ReasonNotOwned:
				return nil
			}
			return fmt.Errorf("still there, not refused: %+v", forged.Status.Conditions)
		})
		waitReady(t, fanned, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
	})

	t.Run("a ClusterSecretStore refuses adoption unless its admin allows it", func(t *testing.T) {
		ps := clusterPush(teamA, "adopt", shared.Name, "inline")
		ps.Spec.AdoptionPolicy = esv1alpha1.AdoptionPolicyAdopt
		create(t, ps)
		if msg := waitReady(t, ps, metav1.ConditionFalse, esv1alpha1.ReasonRefusedByStore); !strings.Contains(msg, "adopt") {
			t.Errorf("condition %q should say adoption is refused", msg)
		}
	})

	t.Run("the admin confines each namespace to its own remote keys and may refuse deletion", func(t *testing.T) {
		confined := clusterStore("confined-"+admin, ssv2.ClusterSecretStoreSpec{SecretStoreSpec: storeSpec("Fake", "shared", admin)})
		confined.Spec.PushPolicy = &ssv2.PushPolicy{RemoteKeyPrefix: "teams/{namespace}/", Deletion: ssv2.Refused}
		create(t, confined)
		waitReady(t, confined, metav1.ConditionTrue, ssv2.ReasonValid)

		outside := clusterPush(teamA, "outside", confined.Name, "teams/"+teamB+"/password")
		create(t, outside)
		if msg := waitReady(t, outside, metav1.ConditionFalse, esv1alpha1.ReasonRefusedByStore); !strings.Contains(msg, "teams/"+teamA+"/") {
			t.Errorf("condition %q should name the prefix the namespace may use", msg)
		}
		inside := clusterPush(teamA, "inside", confined.Name, "teams/"+teamA+"/password")
		create(t, inside)
		waitReady(t, inside, metav1.ConditionTrue, esv1alpha1.ReasonSynced)

		deleting := clusterPush(teamA, "deleting", confined.Name, "teams/"+teamA+"/other")
		deleting.Spec.DeletionPolicy = esv1alpha1.DeletionPolicyDelete
		create(t, deleting)
		if msg := waitReady(t, deleting, metav1.ConditionFalse, esv1alpha1.ReasonRefusedByStore); !strings.Contains(msg, "deletionPolicy Delete") {
			t.Errorf("condition %q should say deletion is refused", msg)
		}
	})

	// Nothing team-a did changed team-b's standing.
	consistently(t, 2*time.Second, "team-b's PushSecret to stay Synced", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(psB), psB); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(conditions(psB), esv1alpha1.ConditionReady); c == nil || c.Reason != esv1alpha1.ReasonSynced {
			return fmt.Errorf("Ready is %v", c)
		}
		return nil
	})
}
