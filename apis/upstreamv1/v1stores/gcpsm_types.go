package v1stores

import "github.com/eso-dev/eso/apis/upstreamv1"

// SecretVersionSelectionPolicy says what the GCP provider does when the
// latest version of a secret is disabled or destroyed.
// +kubebuilder:validation:Enum=LatestOrFail;LatestOrFetch
type SecretVersionSelectionPolicy string

// Secret version selection policies.
const (
	// SecretVersionSelectionPolicyLatestOrFail reads "latest" and fails when it is unusable.
	SecretVersionSelectionPolicyLatestOrFail SecretVersionSelectionPolicy = "LatestOrFail"
	// SecretVersionSelectionPolicyLatestOrFetch falls back to the newest usable version.
	SecretVersionSelectionPolicyLatestOrFetch SecretVersionSelectionPolicy = "LatestOrFetch"
)

// GCPSMProvider configures a store backed by Google Cloud Secret Manager.
type GCPSMProvider struct {
	// Auth says how eso authenticates to Google Cloud; without any, the
	// application default credentials of eso's own workload are used.
	// +optional
	Auth GCPSMAuth `json:"auth,omitempty"`

	// ProjectID is the project holding the secrets.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ProjectID string `json:"projectID,omitempty"`

	// Location selects regional secrets (e.g. europe-west1); empty means global.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Location string `json:"location,omitempty"`

	// SecretVersionSelectionPolicy says what happens when "latest" is disabled or destroyed.
	// +kubebuilder:default=LatestOrFail
	// +optional
	SecretVersionSelectionPolicy SecretVersionSelectionPolicy `json:"secretVersionSelectionPolicy,omitempty"`
}

// GCPSMAuth holds the ways eso can authenticate to Google Cloud.
type GCPSMAuth struct {
	// SecretRef reads a service account key (JSON) from a Secret.
	// +optional
	SecretRef *upstreamv1.GCPSMAuthSecretRef `json:"secretRef,omitempty"`

	// WorkloadIdentity uses GKE Workload Identity with a ServiceAccount's token.
	// +optional
	WorkloadIdentity *upstreamv1.GCPWorkloadIdentity `json:"workloadIdentity,omitempty"`

	// WorkloadIdentityFederation exchanges an external token (Kubernetes,
	// AWS, or a credential configuration) at Google's STS.
	// +optional
	WorkloadIdentityFederation *GCPWorkloadIdentityFederation `json:"workloadIdentityFederation,omitempty"`
}

// GCPWorkloadIdentityFederation obtains Google access tokens through
// Workload Identity Federation.
type GCPWorkloadIdentityFederation struct {
	// CredConfig is a ConfigMap key holding an external account credential
	// configuration (JSON).
	// +optional
	CredConfig *ConfigMapReference `json:"credConfig,omitempty"`

	// ServiceAccountRef is the ServiceAccount whose token is exchanged, when
	// the cluster is the pool's identity provider.
	// +optional
	ServiceAccountRef *upstreamv1.ServiceAccountSelector `json:"serviceAccountRef,omitempty"`

	// AwsSecurityCredentials are AWS credentials exchanged, when the AWS
	// metadata server cannot be used.
	// +optional
	AwsSecurityCredentials *AwsCredentialsConfig `json:"awsSecurityCredentials,omitempty"`

	// Audience is the STS audience (pool and provider resource name); needed
	// with serviceAccountRef or awsSecurityCredentials, and overrides the one
	// in credConfig.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Audience string `json:"audience,omitempty"`

	// ExternalTokenEndpoint must equal credential_source.url of credConfig:
	// a check that the configuration reads tokens from where it should.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	ExternalTokenEndpoint string `json:"externalTokenEndpoint,omitempty"`

	// GCPServiceAccountEmail is a Google service account impersonated after
	// federation; it overrides the impersonation URL of credConfig and the
	// iam.gke.io/gcp-service-account annotation of serviceAccountRef.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^.*@.*\.iam\.gserviceaccount\.com$`
	// +optional
	GCPServiceAccountEmail string `json:"gcpServiceAccountEmail,omitempty"`
}

// ConfigMapReference names a key of a ConfigMap.
type ConfigMapReference struct {
	// Name of the ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// Namespace of the ConfigMap; empty means the store's own namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Key holding the credential configuration.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}

// AwsCredentialsConfig is an AWS region and the Secret holding AWS credentials
// (keys aws_access_key_id, aws_secret_access_key and optionally aws_session_token).
type AwsCredentialsConfig struct {
	// Region is the AWS region, e.g. eu-central-1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=50
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]+$`
	Region string `json:"region"`

	// AwsCredentialsSecretRef names the Secret holding the credentials.
	AwsCredentialsSecretRef *SecretReference `json:"awsCredentialsSecretRef"`
}

// SecretReference names a Secret.
type SecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// Namespace of the Secret; empty means the store's own namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespace string `json:"namespace,omitempty"`
}
