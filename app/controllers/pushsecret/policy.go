package pushsecret

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/stores"
)

// A ClusterSecretStore is shared by every namespace it admits, each a
// tenant that must not reach another's remote secrets. Two rules keep them
// apart. The admin's: a store's pushPolicy says which remote keys each
// namespace may write and whether any may adopt or delete. eso's own: a
// remote secret of a ClusterSecretStore is held by the PushSecret that
// recorded pushing it first (status.syncedPushSecrets, which only eso
// writes), and no other overwrites or deletes it.

// errRefusedByStore: the store's pushPolicy refuses what the PushSecret
// asks. An edit of either fixes it.
var errRefusedByStore = errors.New("refused by the store's pushPolicy")

// namespaceVar is what a remoteKeyPrefix says for the PushSecret's namespace.
const namespaceVar = "{namespace}"

// checkPolicy refuses a PushSecret of namespace what store s's pushPolicy
// forbids: adoption (refused by default through a ClusterSecretStore),
// deletion, or a remote key outside the namespace's prefix.
func checkPolicy(ps *esv1alpha1.PushSecret, s *pushStore, entries map[string]entry) error {
	policy := pushPolicyOf(s.store)
	if ps.Spec.AdoptionPolicy == esv1alpha1.AdoptionPolicyAdopt && !adoptionAllowed(s.store) {
		return fmt.Errorf("%w: %s does not let PushSecrets adopt remote secrets (adoptionPolicy Adopt)", errRefusedByStore, s.target.key())
	}
	if ps.Spec.DeletionPolicy == esv1alpha1.DeletionPolicyDelete && policy.Deletion == ssv2.Refused {
		return fmt.Errorf("%w: %s does not let PushSecrets delete what they pushed (deletionPolicy Delete)", errRefusedByStore, s.target.key())
	}
	if s.store != nil && s.store.Kind == stores.KindClusterSecretStore {
		for id, e := range entries {
			if k := e.data.Match.RemoteRef.RemoteKey; !canonicalKey(k) {
				return fmt.Errorf("%w: %s: remote key %q through %s must be a clean path and no ARN, so that one remote secret has one name",
					errRefusedByStore, id, k, s.target.key())
			}
		}
	}
	if prefix := remoteKeyPrefix(s.store, ps.Namespace); prefix != "" {
		for id, e := range entries {
			if !strings.HasPrefix(e.data.Match.RemoteRef.RemoteKey, prefix) {
				return fmt.Errorf("%w: %s: %s lets namespace %s write only remote keys starting with %q", errRefusedByStore, id, s.target.key(), ps.Namespace, prefix)
			}
		}
	}
	return nil
}

// canonicalKey: the key is the one name of its remote secret. Vault joins
// "a//b", "a/./b" and "a/b/" into "a/b", and AWS takes an ARN for a name:
// through a shared store, such spellings would let one tenant reach a
// secret another holds under its plain name.
func canonicalKey(k string) bool {
	return k == path.Clean(k) && !strings.HasPrefix(k, "arn:")
}

func pushPolicyOf(s *stores.Store) ssv2.PushPolicy {
	if s == nil || s.Spec == nil || s.Spec.PushPolicy == nil {
		return ssv2.PushPolicy{}
	}
	return *s.Spec.PushPolicy
}

// adoptionAllowed: a SecretStore allows adoption unless it says otherwise,
// a ClusterSecretStore only when its admin says so.
func adoptionAllowed(s *stores.Store) bool {
	switch pushPolicyOf(s).Adoption {
	case ssv2.Allowed:
		return true
	case ssv2.Refused:
		return false
	}
	return s.Kind != stores.KindClusterSecretStore
}

// deletionAllowed says whether a PushSecret may delete through s.
func deletionAllowed(s *stores.Store) bool { return pushPolicyOf(s).Deletion != ssv2.Refused }

// remoteKeyPrefix is how the store lets namespace's remote keys start.
func remoteKeyPrefix(s *stores.Store, namespace string) string {
	return strings.ReplaceAll(pushPolicyOf(s).RemoteKeyPrefix, namespaceVar, namespace)
}

// indexClusterKeys indexes PushSecrets by the remote keys they recorded
// pushing through ClusterSecretStores: "<store key>\x00<remote key>".
const indexClusterKeys = "status.syncedPushSecrets.clusterKeys"

func clusterKeyIndexValues(ps *esv1alpha1.PushSecret) []string {
	seen := map[string]bool{}
	var out []string
	for storeKey, held := range ps.Status.SyncedPushSecrets {
		if !strings.HasPrefix(storeKey, stores.KindClusterSecretStore+"/") {
			continue
		}
		for _, d := range held {
			v := clusterKey(storeKey, d.Match.RemoteRef.RemoteKey)
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

func clusterKey(storeKey, remoteKey string) string { return storeKey + "\x00" + remoteKey }

// records reports whether ps's status records pushing remoteKey to storeKey.
func records(ps *esv1alpha1.PushSecret, storeKey, remoteKey string) bool {
	for _, d := range ps.Status.SyncedPushSecrets[storeKey] {
		if d.Match.RemoteRef.RemoteKey == remoteKey {
			return true
		}
	}
	return false
}

// errHeld: another PushSecret holds the remote secret.
var errHeld = fmt.Errorf("%w: another PushSecret pushed it first", errNotOwned)

// sameConfiguration lists the status keys of the ClusterSecretStores that
// write through the same provider configuration as storeKey, storeKey
// first: one key space, whichever of them a PushSecret names (an admin
// may give each team a store of its own over one configuration). Other
// stores' keys are not shared between namespaces.
func (r *Reconciler) sameConfiguration(ctx context.Context, storeKey string) ([]string, error) {
	out := []string{storeKey}
	name, ok := strings.CutPrefix(storeKey, stores.KindClusterSecretStore+"/")
	if !ok {
		return out, nil
	}
	all, err := r.Resolver.Select(ctx, "", stores.KindClusterSecretStore, "", labels.Everything())
	if err != nil {
		return nil, err
	}
	configs := map[string]string{}
	for _, s := range all {
		if _, ref, err := r.Resolver.Provider(s); err == nil {
			configs[s.Name] = strings.Join([]string{s.Spec.ProviderConfig.Address, ref.Kind, ref.Namespace, ref.Name}, "/")
		}
	}
	mine, ok := configs[name]
	if !ok {
		return out, nil
	}
	for _, n := range slices.Sorted(maps.Keys(configs)) {
		if n != name && configs[n] == mine {
			out = append(out, stores.KindClusterSecretStore+"/"+n)
		}
	}
	return out, nil
}

// heldByAnother reports whether remoteKey, through any of the cluster
// stores storeKeys (see sameConfiguration), is held by another than ps.
// Whoever has it recorded holds it against any that has not; when two
// have (they pushed at once), the first created keeps it (at the same
// second, the first by namespace and name). The copies of one
// ClusterPushSecret push alike (holderOf). To delete, no other PushSecret
// at all may still record it.
func (r *Reconciler) heldByAnother(ctx context.Context, ps *esv1alpha1.PushSecret, storeKeys []string, remoteKey string, deleting bool) (bool, error) {
	if len(storeKeys) == 0 || !strings.HasPrefix(storeKeys[0], stores.KindClusterSecretStore+"/") {
		return false, nil // only cluster stores are shared between namespaces
	}
	recorded := slices.ContainsFunc(storeKeys, func(k string) bool { return records(ps, k, remoteKey) })
	holder := ""
	for _, storeKey := range storeKeys {
		var list esv1alpha1.PushSecretList
		if err := r.Client.List(ctx, &list, client.MatchingFields{indexClusterKeys: clusterKey(storeKey, remoteKey)}); err != nil {
			return false, err
		}
		for i := range list.Items {
			other := &list.Items[i]
			switch {
			case other.UID == ps.UID:
				continue
			case deleting:
				return true, nil
			case recorded && !precedes(other, ps):
				continue
			}
			if holder == "" {
				holder = r.holderOf(ctx, ps)
			}
			if r.holderOf(ctx, other) != holder {
				return true, nil
			}
		}
	}
	return false, nil
}

// holderOf is whom a PushSecret pushes for: the ClusterPushSecret that made
// it, whose copies in every namespace it selects push alike, or itself.
// Owner references are a tenant's to write, so the ClusterPushSecret must
// exist with that UID, name this PushSecret and select its namespace.
func (r *Reconciler) holderOf(ctx context.Context, ps *esv1alpha1.PushSecret) string {
	self := "PushSecret/" + string(ps.UID)
	ref := metav1.GetControllerOf(ps)
	if ref == nil || ref.Kind != "ClusterPushSecret" {
		return self
	}
	var cps esv1alpha1.ClusterPushSecret
	if err := r.Client.Get(ctx, client.ObjectKey{Name: ref.Name}, &cps); err != nil || cps.UID != ref.UID {
		return self
	}
	if name := cps.Spec.PushSecretName; ps.Name != name && (name != "" || ps.Name != cps.Name) {
		return self
	}
	// A copy a tenant edited, or one whose remote keys come from the
	// tenant's own Secret (dataTo without remoteKey), pushes for itself.
	if !equality.Semantic.DeepEqual(ps.Spec, cps.Spec.PushSecretSpec) {
		return self
	}
	for _, dt := range cps.Spec.PushSecretSpec.DataTo {
		if dt.RemoteKey == "" {
			return self
		}
	}
	var ns corev1.Namespace
	if err := r.Client.Get(ctx, client.ObjectKey{Name: ps.Namespace}, &ns); err != nil {
		return self
	}
	for _, s := range cps.Spec.NamespaceSelectors {
		if sel, err := metav1.LabelSelectorAsSelector(s); err == nil && sel.Matches(labels.Set(ns.Labels)) {
			return "ClusterPushSecret/" + string(cps.UID)
		}
	}
	return self
}

// precedes orders PushSecrets by creation, then by namespace and name.
func precedes(a, b *esv1alpha1.PushSecret) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return types.NamespacedName{Namespace: a.Namespace, Name: a.Name}.String() < types.NamespacedName{Namespace: b.Namespace, Name: b.Name}.String()
}
