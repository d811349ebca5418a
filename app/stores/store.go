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

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers"
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
}

// FromSecretStore wraps a SecretStore.
func FromSecretStore(s *ssv2.SecretStore) *Store {
	return &Store{Kind: KindSecretStore, Namespace: s.Namespace, Name: s.Name, UID: s.UID,
		Generation: s.Generation, Spec: &s.Spec, Status: &s.Status, Object: s}
}

// FromClusterSecretStore wraps a ClusterSecretStore.
func FromClusterSecretStore(s *ssv2.ClusterSecretStore) *Store {
	return &Store{Kind: KindClusterSecretStore, Name: s.Name, UID: s.UID,
		Generation: s.Generation, Spec: &s.Spec.SecretStoreSpec, Status: &s.Status, Cluster: &s.Spec, Object: s}
}

// String names the store for messages.
func (s *Store) String() string {
	if s.Namespace == "" {
		return s.Kind + " " + s.Name
	}
	return s.Kind + " " + s.Namespace + "/" + s.Name
}

// ErrCrossNamespace: a SecretStore names a provider configuration of another namespace.
var ErrCrossNamespace = errors.New("a SecretStore may only use a provider configuration of its own namespace")

// ProviderRef is the provider configuration the store points at. A SecretStore
// always resolves in its own namespace, whatever its providerRef says.
func (s *Store) ProviderRef() (providers.Ref, error) {
	ref := s.Spec.ProviderConfig.ProviderRef
	out := providers.Ref{Kind: ref.Kind, Name: ref.Name, Namespace: ref.Namespace}
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
func (s *Store) Scope(namespace string) providers.Scope {
	if s.Cluster == nil {
		return providers.Scope{Namespace: s.Namespace}
	}
	if s.Cluster.AuthenticationScope == ssv2.ManifestNamespace {
		return providers.Scope{Namespace: namespace}
	}
	return providers.Scope{Namespace: s.Spec.ProviderConfig.ProviderRef.Namespace}
}

// ProviderRefIndexKey is the index value stores are found by when their
// provider configuration changes.
func ProviderRefIndexKey(kind, namespace, name string) string {
	return kind + "/" + namespace + "/" + name
}
