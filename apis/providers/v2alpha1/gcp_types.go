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

// GCPAuth holds GCP credentials: exactly one method.
// +kubebuilder:validation:XValidation:rule="[has(self.secretRef), has(self.workloadIdentity)].filter(x, x).size() == 1",message="auth needs exactly one of secretRef or workloadIdentity"
type GCPAuth struct {
	// SecretRef reads a service account key (JSON) from a Secret of the
	// credentials namespace.
	// +optional
	SecretRef *GCPAuthSecretRef `json:"secretRef,omitempty"`
	// WorkloadIdentity exchanges a token of a ServiceAccount of the
	// credentials namespace for Google credentials through GKE workload
	// identity: the ServiceAccount's iam.gke.io/gcp-service-account
	// annotation names the Google service account to impersonate; without it
	// the federated identity itself is used.
	// +optional
	WorkloadIdentity *GCPWorkloadIdentity `json:"workloadIdentity,omitempty"`
}

// GCPWorkloadIdentity names the GKE cluster whose workload identity pool
// trusts the ServiceAccount's tokens.
type GCPWorkloadIdentity struct {
	// ServiceAccountRef names the ServiceAccount whose token is exchanged.
	// Audiences default to the cluster project's identity namespace.
	ServiceAccountRef KubernetesServiceAccount `json:"serviceAccountRef"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	ClusterLocation string `json:"clusterLocation"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	ClusterName string `json:"clusterName"`
	// ClusterProjectID is the cluster's project; empty means projectID.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ClusterProjectID string `json:"clusterProjectID,omitempty"`
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
