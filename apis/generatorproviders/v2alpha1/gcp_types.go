package v2alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
)

// GCRAccessTokenSpec configures access tokens for Google Container Registry
// and Artifact Registry.
type GCRAccessTokenSpec struct {
	// ProjectID is the project of the identity: with workload identity, the
	// default project of the cluster's identity pool.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	ProjectID string `json:"projectID"`

	// Auth says how eso authenticates: a service account key from a Secret
	// or workload identity, both of the configuration's namespace.
	// +optional
	Auth *provv1.GCPAuth `json:"auth,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}
// +kubebuilder:printcolumn:name="Project",type=string,JSONPath=`.spec.projectID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// GCRAccessToken generates a registry login: username "oauth2accesstoken",
// password an OAuth access token, and expiry (Unix seconds).
type GCRAccessToken struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GCRAccessTokenSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// GCRAccessTokenList is a list of GCRAccessToken.
type GCRAccessTokenList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GCRAccessToken `json:"items"`
}

func init() {
	SchemeBuilder.Register(&GCRAccessToken{}, &GCRAccessTokenList{})
}
