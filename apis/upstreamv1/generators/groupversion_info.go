// Package generators contains upstream ESO's generator kinds of
// generators.external-secrets.io/v1alpha1, served so that upstream's
// manifests apply unchanged. Each namespaced kind carries the spec of eso's
// kind of the same name (apis/generatorproviders/v2alpha1), whose schema
// serves every path of upstream's; ClusterGenerator embeds one of them.
// The v1 compatibility layer (app/v1compat) translates them into eso's
// configurations; builds with the tag nov1 leave that out.
// +kubebuilder:object:generate=true
// +groupName=generators.external-secrets.io
// +versionName=v1alpha1
package generators

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "generators.external-secrets.io", Version: "v1alpha1"}

	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
