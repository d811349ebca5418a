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
