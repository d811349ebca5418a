// Package v2alpha1 contains provider.generator.external-secrets.io/v2alpha1:
// the generator kinds (Password, UUID, and the cloud generators of the
// compiled-in SDKs). A Generator's providerRef names one of them, and an
// ExternalSecret may also reference one directly.
// +kubebuilder:object:generate=true
// +groupName=provider.generator.external-secrets.io
package v2alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "provider.generator.external-secrets.io", Version: "v2alpha1"}

	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
