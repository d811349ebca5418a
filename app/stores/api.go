package stores

import (
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// API is one store kind eso serves: secretstore.external-secrets.io/v2alpha1
// SecretStore and ClusterSecretStore always, and the external-secrets.io/v1
// kinds when the v1 compatibility layer is compiled in. The controllers that
// watch stores and the resolver that reads them go through this table, so a
// kind is added in one place.
type API struct {
	APIVersion string
	// Kind is KindSecretStore or KindClusterSecretStore.
	Kind string
	// New returns an empty object of the kind; NewList an empty list.
	New     func() client.Object
	NewList func() client.ObjectList
	// Wrap sees an object of the kind as a Store; Items the objects of a list.
	Wrap  func(client.Object) *Store
	Items func(client.ObjectList) []client.Object
	// Status is where the store's Ready condition is written.
	Status func(client.Object) *ssv2.SecretStoreStatus
}

// Cluster reports whether the kind is cluster-scoped.
func (a API) Cluster() bool { return a.Kind == KindClusterSecretStore }

// V2APIs are the secretstore.external-secrets.io/v2alpha1 kinds.
var V2APIs = []API{
	{
		APIVersion: esv1.StoreAPIVersionV2Alpha1, Kind: KindSecretStore,
		New:     func() client.Object { return &ssv2.SecretStore{} },
		NewList: func() client.ObjectList { return &ssv2.SecretStoreList{} },
		Wrap:    func(o client.Object) *Store { return FromSecretStore(o.(*ssv2.SecretStore)) },
		Items:   func(l client.ObjectList) []client.Object { return ItemsOf(l.(*ssv2.SecretStoreList).Items) },
		Status:  func(o client.Object) *ssv2.SecretStoreStatus { return &o.(*ssv2.SecretStore).Status },
	},
	{
		APIVersion: esv1.StoreAPIVersionV2Alpha1, Kind: KindClusterSecretStore,
		New:     func() client.Object { return &ssv2.ClusterSecretStore{} },
		NewList: func() client.ObjectList { return &ssv2.ClusterSecretStoreList{} },
		Wrap:    func(o client.Object) *Store { return FromClusterSecretStore(o.(*ssv2.ClusterSecretStore)) },
		Items:   func(l client.ObjectList) []client.Object { return ItemsOf(l.(*ssv2.ClusterSecretStoreList).Items) },
		Status:  func(o client.Object) *ssv2.SecretStoreStatus { return &o.(*ssv2.ClusterSecretStore).Status },
	},
}

// ItemsOf returns pointers to the items of a list, as objects.
func ItemsOf[T any, P interface {
	*T
	client.Object
}](items []T) []client.Object {
	out := make([]client.Object, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}

// Changed passes the events of a's stores that can change what the objects
// using them do: creation, deletion, a spec change, or a change of the Ready
// condition.
func (a API) Changed() predicate.Funcs {
	return ReadyChanged(func(o client.Object) []metav1.Condition { return a.Status(o).Conditions })
}

// FoundReady reports whether an update of one of a's stores is its first
// check finding it Ready: the same store (UID and generation) held no Ready
// condition before. Nothing gated its users then, so those already Ready
// gain nothing from it. A check of a later generation is not one: an
// ExternalSecret may have failed against the new spec meanwhile, with its
// status not yet in the cache.
func (a API) FoundReady(old, updated client.Object) bool {
	return old.GetUID() == updated.GetUID() && old.GetGeneration() == updated.GetGeneration() &&
		meta.FindStatusCondition(a.Status(old).Conditions, ssv2.ConditionReady) == nil &&
		meta.IsStatusConditionTrue(a.Status(updated).Conditions, ssv2.ConditionReady)
}

// ReadyChanged passes creation, deletion, a generation change and a change of
// the Ready condition (its status or the generation it describes) of objects
// whose conditions are conditions(o).
func ReadyChanged(conditions func(client.Object) []metav1.Condition) predicate.Funcs {
	ready := func(o client.Object) string {
		if c := meta.FindStatusCondition(conditions(o), ssv2.ConditionReady); c != nil {
			return string(c.Status) + "/" + strconv.FormatInt(c.ObservedGeneration, 10)
		}
		return ""
	}
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() || ready(e.ObjectOld) != ready(e.ObjectNew)
		},
	}
}
