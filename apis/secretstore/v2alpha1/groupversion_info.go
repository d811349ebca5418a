// Package v2alpha1 contains the secretstore.external-secrets.io/v2alpha1 API:
// SecretStore and ClusterSecretStore. A store says which provider configuration
// to use and how eso treats it (refresh, gating, caching, class); the provider's
// own settings live in a provider-owned kind referenced by spec.providerConfig.providerRef.
// +kubebuilder:object:generate=true
// +groupName=secretstore.external-secrets.io
package v2alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "secretstore.external-secrets.io", Version: "v2alpha1"}

	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
