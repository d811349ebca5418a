package v2alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// KubernetesSpec reads Secrets of a namespace of this cluster.
type KubernetesSpec struct {
	// RemoteNamespace is the namespace whose Secrets are read. Empty means the
	// namespace credentials are resolved in: the store's namespace, or for a
	// ClusterSecretStore with authenticationScope ManifestNamespace, the
	// ExternalSecret's namespace.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	RemoteNamespace string `json:"remoteNamespace,omitempty"`

	// Auth says whose identity reads the Secrets. Absent means eso's own
	// identity, which may only read the credentials namespace itself: a
	// RemoteNamespace naming another namespace then needs auth.serviceAccount.
	// +optional
	Auth *KubernetesAuth `json:"auth,omitempty"`
}

// KubernetesAuth is the identity the Kubernetes provider reads with.
type KubernetesAuth struct {
	// ServiceAccount is a ServiceAccount of the credentials namespace; eso
	// requests a short-lived token for it (TokenRequest) and reads with that
	// account's RBAC.
	ServiceAccount *KubernetesServiceAccount `json:"serviceAccount"`
}

// KubernetesServiceAccount names a ServiceAccount of the credentials namespace.
type KubernetesServiceAccount struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Audiences requested for the token; empty means the API server's default.
	// +optional
	Audiences []string `json:"audiences,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=k8sprovider,categories={external-secrets,external-secrets-providers}
// +kubebuilder:printcolumn:name="Remote Namespace",type=string,JSONPath=`.spec.remoteNamespace`
// +kubebuilder:printcolumn:name="ServiceAccount",type=string,JSONPath=`.spec.auth.serviceAccount.name`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Kubernetes is a provider configuration that reads Secrets of this cluster.
type Kubernetes struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec KubernetesSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// KubernetesList is a list of Kubernetes.
type KubernetesList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Kubernetes `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Kubernetes{}, &KubernetesList{})
}
