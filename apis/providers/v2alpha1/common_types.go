package v2alpha1

// SecretKeySelector names a key of a Secret in the credentials namespace: the
// provider configuration's own, or for a ClusterSecretStore with
// authenticationScope ManifestNamespace, the ExternalSecret's. There is no
// namespace field on purpose.
type SecretKeySelector struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// CAProvider names a PEM CA bundle in a Secret or ConfigMap of the credentials
// namespace, so a CA rotated there is picked up without editing the provider
// configuration.
type CAProvider struct {
	// Type is the kind of object holding the bundle.
	// +kubebuilder:validation:Enum=Secret;ConfigMap
	Type string `json:"type"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// CAProvider types.
const (
	CAProviderSecret    = "Secret"
	CAProviderConfigMap = "ConfigMap"
)
