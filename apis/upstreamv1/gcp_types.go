package upstreamv1

// The GCP credentials blocks are shared by a v1 gcpsm store and by the
// Vault block's gcp auth method.

// GCPSMAuthSecretRef names the Secret key holding a service account key.
type GCPSMAuthSecretRef struct {
	// SecretAccessKey is the service account key JSON.
	// +optional
	SecretAccessKey SecretKeySelector `json:"secretAccessKeySecretRef,omitempty"`
}

// GCPWorkloadIdentity authenticates with GKE Workload Identity.
type GCPWorkloadIdentity struct {
	// ServiceAccountRef is the Kubernetes ServiceAccount bound to a Google service account.
	ServiceAccountRef ServiceAccountSelector `json:"serviceAccountRef"`

	// ClusterLocation of the GKE cluster; read from the metadata server when empty.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	ClusterLocation string `json:"clusterLocation,omitempty"`

	// ClusterName of the GKE cluster; read from the metadata server when empty.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClusterName string `json:"clusterName,omitempty"`

	// ClusterProjectID is the cluster's project; read from the metadata server when empty.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClusterProjectID string `json:"clusterProjectID,omitempty"`
}
