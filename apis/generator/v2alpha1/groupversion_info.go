// Package v2alpha1 contains generator.external-secrets.io/v2alpha1: Generator
// and ClusterGenerator, which put a generator kind behind the same controls as
// a store (refresh, class, gating, cluster scope with explicit
// authentication), and GeneratorState, the record of what a generator made so
// that it can be revoked later.
// +kubebuilder:object:generate=true
// +groupName=generator.external-secrets.io
package v2alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "generator.external-secrets.io", Version: "v2alpha1"}

	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
