// Package v2alpha1 contains provider.secretstore.external-secrets.io/v2alpha1:
// the provider-owned configuration kinds a store's providerRef points at, one
// small kind per provider. Only the provider reads them.
// +kubebuilder:object:generate=true
// +groupName=provider.secretstore.external-secrets.io
package v2alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "provider.secretstore.external-secrets.io", Version: "v2alpha1"}

	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
