package v2alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// GCPSecretManagerSpec configures Google Cloud Secret Manager.
type GCPSecretManagerSpec struct {
	// ProjectID holds the secrets.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	ProjectID string `json:"projectID"`

	// Location selects regional secrets (e.g. europe-west1) and their
	// regional endpoint; empty means global secrets.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Location string `json:"location,omitempty"`

	// Endpoint overrides the API endpoint (host:port), e.g. a private endpoint.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// Auth says how eso authenticates. Without it, Application Default
	// Credentials of eso's own identity are used.
	// +optional
	Auth *GCPAuth `json:"auth,omitempty"`
}

// GCPAuth holds GCP credentials.
type GCPAuth struct {
	// SecretRef reads a service account key (JSON) from a Secret of the
	// credentials namespace.
	// +optional
	SecretRef *GCPAuthSecretRef `json:"secretRef,omitempty"`
}

// GCPAuthSecretRef names the service account key.
type GCPAuthSecretRef struct {
	SecretAccessKey SecretKeySelector `json:"secretAccessKeySecretRef"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=gcpsm,categories={external-secrets,external-secrets-providers}
// +kubebuilder:printcolumn:name="Project",type=string,JSONPath=`.spec.projectID`
// +kubebuilder:printcolumn:name="Location",type=string,JSONPath=`.spec.location`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// GCPSecretManager is a provider configuration for Google Cloud Secret Manager.
type GCPSecretManager struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GCPSecretManagerSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// GCPSecretManagerList is a list of GCPSecretManager.
type GCPSecretManagerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GCPSecretManager `json:"items"`
}

func init() {
	SchemeBuilder.Register(&GCPSecretManager{}, &GCPSecretManagerList{})
}
