// Package v1stores contains the SecretStore and ClusterSecretStore kinds of
// external-secrets.io/v1, schema-compatible with upstream External Secrets
// Operator for the providers eso serves (aws, gcpsm, vault, kubernetes,
// fake) plus eso's own plugin provider. A store naming any other upstream
// provider is refused at admission with a message naming the served ones.
//
// The ExternalSecret kinds of the same group and version live in
// apis/externalsecrets/v1; both packages register kinds of one GroupVersion.
// +kubebuilder:object:generate=true
// +groupName=external-secrets.io
// +versionName=v1
package v1stores

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "external-secrets.io", Version: "v1"}

	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
