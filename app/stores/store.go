// Package stores resolves SecretStores and ClusterSecretStores into what a
// provider call needs (the provider, its configuration ref and the scope) and
// enforces who may use which store. The store controller and the controllers
// of objects that use stores share it, so the rules live in one place.
package stores

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// Kinds of stores.
const (
	KindSecretStore        = "SecretStore"
	KindClusterSecretStore = "ClusterSecretStore"
)

// Store is a SecretStore or ClusterSecretStore seen through what they share.
type Store struct {
	Kind      string
	Namespace string // empty for a ClusterSecretStore
	Name      string
	UID       types.UID
	// Generation of the store spec, part of what keys cached clients.
	Generation int64
	Spec       *ssv2.SecretStoreSpec
	Status     *ssv2.SecretStoreStatus
	// Cluster is set for a ClusterSecretStore.
	Cluster *ssv2.ClusterSecretStoreSpec
	// Object is the underlying API object.
	Object client.Object

	// APIVersion is the store's API: esv1.StoreAPIVersionV2Alpha1, or
	// external-secrets.io/v1 for a store the v1 compatibility layer serves.
	APIVersion string
	// Inline is the provider configuration a v1 store carries in its spec,
	// translated to the provider's configuration kind (named by
	// Spec.ProviderConfig.ProviderRef); nil when the configuration is an
	// object of its own. Translation sets Untranslatable instead when the
	// spec uses what eso cannot serve.
	Inline         client.Object
	Untranslatable error
	// Notes name the fields of a v1 store accepted without effect in eso,
	// for its Ready message.
	Notes []string
	// Shadows is set on a v1 store found for a reference without an
	// apiVersion while a v2alpha1 store of the same name exists too.
	Shadows bool

	// config is the provider configuration Fingerprint read in this
	// reconcile: a client built now is built from it, not read again, and
	// matches the fingerprint it is cached under.
	config client.Object
}

// FromSecretStore wraps a SecretStore.
func FromSecretStore(s *ssv2.SecretStore) *Store {
	return &Store{Kind: KindSecretStore, Namespace: s.Namespace, Name: s.Name, UID: s.UID,
		Generation: s.Generation, Spec: &s.Spec, Status: &s.Status, Object: s, APIVersion: esv1.StoreAPIVersionV2Alpha1}
}

// FromClusterSecretStore wraps a ClusterSecretStore.
func FromClusterSecretStore(s *ssv2.ClusterSecretStore) *Store {
	return &Store{Kind: KindClusterSecretStore, Name: s.Name, UID: s.UID,
		Generation: s.Generation, Spec: &s.Spec.SecretStoreSpec, Status: &s.Status, Cluster: &s.Spec, Object: s,
		APIVersion: esv1.StoreAPIVersionV2Alpha1}
}

// String names the store for messages; a v1 store says so.
func (s *Store) String() string {
	kind := s.Kind
	if s.APIVersion != esv1.StoreAPIVersionV2Alpha1 {
		kind += " (" + s.APIVersion + ")"
	}
	if s.Namespace == "" {
		return kind + " " + s.Name
	}
	return kind + " " + s.Namespace + "/" + s.Name
}

// CacheKind tells apart, in caches keyed by kind and name, the stores of
// one name under the two APIs.
func (s *Store) CacheKind() string { return CacheKind(s.Kind, s.APIVersion) }

// CacheKind is Store.CacheKind for a kind of apiVersion.
func CacheKind(kind, apiVersion string) string {
	if apiVersion == "" || apiVersion == esv1.StoreAPIVersionV2Alpha1 {
		return kind
	}
	return kind + "." + apiVersion
}

// ErrCrossNamespace: a SecretStore names a provider configuration of another namespace.
var ErrCrossNamespace = errors.New("a SecretStore may only use a provider configuration of its own namespace")

// ProviderRef is the provider configuration the store points at. A SecretStore
// always resolves in its own namespace, whatever its providerRef says.
func (s *Store) ProviderRef() (plugin.Ref, error) {
	ref := s.Spec.ProviderConfig.ProviderRef
	out := plugin.Ref{Kind: ref.Kind, Name: ref.Name, Namespace: ref.Namespace}
	if s.Cluster != nil {
		return out, nil
	}
	if ref.Namespace != "" && ref.Namespace != s.Namespace {
		return out, fmt.Errorf("%w: %s names %s %s/%s", ErrCrossNamespace, s, ref.Kind, ref.Namespace, ref.Name)
	}
	out.Namespace = s.Namespace
	return out, nil
}

// Scope is the boundary of a request made through the store on behalf of an
// object in namespace. An empty namespace (store validation) leaves the
// credentials namespace open where it depends on the requester.
func (s *Store) Scope(namespace string) plugin.Scope {
	if s.Cluster == nil {
		return plugin.Scope{Namespace: s.Namespace}
	}
	if s.Cluster.AuthenticationScope == ssv2.ManifestNamespace {
		return plugin.Scope{Namespace: namespace}
	}
	if s.Cluster.CredentialsNamespace != "" {
		return plugin.Scope{Namespace: s.Cluster.CredentialsNamespace}
	}
	return plugin.Scope{Namespace: s.Spec.ProviderConfig.ProviderRef.Namespace}
}

// ProviderRefIndexKey is the index value stores are found by when their
// provider configuration changes.
func ProviderRefIndexKey(kind, namespace, name string) string {
	return kind + "/" + namespace + "/" + name
}
