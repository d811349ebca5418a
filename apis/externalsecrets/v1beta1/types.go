// Package v1beta1 keeps upstream ESO's external-secrets.io/v1beta1 in eso's
// CRDs as a version that is neither served nor stored.
//
// A cluster upgraded from upstream lists v1beta1 in each CRD's
// status.storedVersions, and its objects may still be stored under it; the
// API server refuses a CRD update that drops a version still listed there,
// so eso's CRDs could not take over. Listed here, objects stored as v1beta1
// read as v1 unchanged (conversion None, as upstream, whose v1beta1 and v1
// schemas are the same) and are stored as v1 at their next write. Nothing can
// be created or read as v1beta1 through eso's CRDs.
// +kubebuilder:object:generate=true
// +groupName=external-secrets.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ExternalSecret as stored by upstream under v1beta1: read as v1.
// +kubebuilder:object:root=true
// +kubebuilder:unservedversion
// +kubebuilder:resource:scope=Namespaced,shortName=es,categories={external-secrets}
type ExternalSecret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              runtime.RawExtension `json:"spec,omitempty"`
	Status            runtime.RawExtension `json:"status,omitempty"`
}

// ClusterExternalSecret as stored by upstream under v1beta1: read as v1.
// +kubebuilder:object:root=true
// +kubebuilder:unservedversion
// +kubebuilder:resource:scope=Cluster,shortName=ces,categories={external-secrets}
type ClusterExternalSecret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              runtime.RawExtension `json:"spec,omitempty"`
	Status            runtime.RawExtension `json:"status,omitempty"`
}

// SecretStore as stored by upstream under v1beta1: read as v1.
// +kubebuilder:object:root=true
// +kubebuilder:unservedversion
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-stores},shortName=ss
type SecretStore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              runtime.RawExtension `json:"spec,omitempty"`
	Status            runtime.RawExtension `json:"status,omitempty"`
}

// ClusterSecretStore as stored by upstream under v1beta1: read as v1.
// +kubebuilder:object:root=true
// +kubebuilder:unservedversion
// +kubebuilder:resource:scope=Cluster,categories={external-secrets,external-secrets-stores},shortName=css
type ClusterSecretStore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              runtime.RawExtension `json:"spec,omitempty"`
	Status            runtime.RawExtension `json:"status,omitempty"`
}
