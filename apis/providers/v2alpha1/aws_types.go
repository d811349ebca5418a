package v2alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// AWSAuth says how eso authenticates to AWS. Without any, the SDK's default
// chain is used (environment, IRSA, instance role) with eso's own identity.
// A store takes one of secretRef and jwt (its field's rule); a generator
// may name both, as upstream's documentation does, and then uses
// secretRef, as upstream does.
type AWSAuth struct {
	// SecretRef reads static access keys from a Secret.
	// +optional
	SecretRef *AWSAuthSecretRef `json:"secretRef,omitempty"`
	// JWT exchanges a ServiceAccount token (TokenRequest) for credentials of
	// the role (AssumeRoleWithWebIdentity).
	// +optional
	JWT *AWSJWTAuth `json:"jwt,omitempty"`
}

// AWSAuthSecretRef holds static credentials.
type AWSAuthSecretRef struct {
	AccessKeyID     SecretKeySelector `json:"accessKeyIDSecretRef"`
	SecretAccessKey SecretKeySelector `json:"secretAccessKeySecretRef"`
	// +optional
	SessionToken *SecretKeySelector `json:"sessionTokenSecretRef,omitempty"`
}

// AWSJWTAuth authenticates with a ServiceAccount token of the credentials namespace.
type AWSJWTAuth struct {
	// ServiceAccountRef names the ServiceAccount.
	ServiceAccountRef KubernetesServiceAccount `json:"serviceAccountRef"`
}

// AWSSessionTag is a tag passed to AssumeRole.
type AWSSessionTag struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Key string `json:"key"`
	// +kubebuilder:validation:MaxLength=256
	Value string `json:"value"`
}

// AWSSpec is what AWSSecretManager and AWSParameterStore share.
// +kubebuilder:validation:XValidation:rule="!has(self.auth) || !has(self.auth.jwt) || (has(self.role) && size(self.role) > 0)",message="auth.jwt needs role: the role the ServiceAccount token is exchanged for"
type AWSSpec struct {
	// Region of the service, e.g. eu-central-1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]{2,4}(-[a-z]+)+-[0-9]{1,2}$')",message="region must be an AWS region name, such as eu-central-1"
	Region string `json:"region"`

	// Role is an IAM role ARN to assume with the credentials from auth.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Role string `json:"role,omitempty"`

	// ExternalID is passed to AssumeRole.
	// +kubebuilder:validation:MaxLength=1224
	// +optional
	ExternalID string `json:"externalID,omitempty"`

	// SessionTags are passed to AssumeRole.
	// +kubebuilder:validation:MaxItems=50
	// +optional
	SessionTags []AWSSessionTag `json:"sessionTags,omitempty"`

	// Endpoint overrides the service endpoint (VPC endpoints, FIPS, tests).
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://`
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// STSEndpoint overrides the STS endpoint used to assume roles.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://`
	// +optional
	STSEndpoint string `json:"stsEndpoint,omitempty"`

	// Prefix is prepended to every remote key.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Prefix string `json:"prefix,omitempty"`

	// Auth says how eso authenticates.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!(has(self.secretRef) && has(self.jwt))",message="auth takes secretRef or jwt, not both"
	Auth *AWSAuth `json:"auth,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=awssm,categories={external-secrets,external-secrets-providers}
// +kubebuilder:printcolumn:name="Region",type=string,JSONPath=`.spec.region`
// +kubebuilder:printcolumn:name="Role",type=string,JSONPath=`.spec.role`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// AWSSecretManager is a provider configuration for AWS Secrets Manager.
type AWSSecretManager struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec AWSSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// AWSSecretManagerList is a list of AWSSecretManager.
type AWSSecretManagerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AWSSecretManager `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=awsps,categories={external-secrets,external-secrets-providers}
// +kubebuilder:printcolumn:name="Region",type=string,JSONPath=`.spec.region`
// +kubebuilder:printcolumn:name="Role",type=string,JSONPath=`.spec.role`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// AWSParameterStore is a provider configuration for AWS Systems Manager Parameter Store.
type AWSParameterStore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec AWSSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// AWSParameterStoreList is a list of AWSParameterStore.
type AWSParameterStoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AWSParameterStore `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AWSSecretManager{}, &AWSSecretManagerList{}, &AWSParameterStore{}, &AWSParameterStoreList{})
}
