// Package v1alpha1 contains the external-secrets.io/v1alpha1 API: PushSecret
// and ClusterPushSecret, kept schema-compatible with upstream External
// Secrets Operator so its manifests apply unchanged.
// +kubebuilder:object:generate=true
// +groupName=external-secrets.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "external-secrets.io", Version: "v1alpha1"}

	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
