package v2alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
)

// AWSGeneratorSpec is what the AWS generators share: where to call and as
// whom. Credentials are read from the configuration's namespace.
// +kubebuilder:validation:XValidation:rule="!has(self.auth) || !has(self.auth.jwt) || has(self.auth.secretRef) || (has(self.role) && size(self.role) > 0)",message="auth.jwt needs role: the role the ServiceAccount token is exchanged for"
type AWSGeneratorSpec struct {
	// Region of the service, e.g. eu-central-1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]{2,4}(-[a-z]+)+-[0-9]{1,2}$')",message="region must be an AWS region name, such as eu-central-1"
	Region string `json:"region"`

	// Role is an IAM role ARN to assume with the credentials from auth.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Role string `json:"role,omitempty"`

	// Auth says how eso authenticates: static keys from a Secret or a
	// ServiceAccount token exchanged for role.
	// +optional
	Auth *provv1.AWSAuth `json:"auth,omitempty"`

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
}

// ECRAuthorizationTokenScope selects the registry a login is for.
// +kubebuilder:validation:Enum=private;public
type ECRAuthorizationTokenScope string

// ECR login scopes.
const (
	// ECRScopePrivate: the account's private registry (ECR).
	ECRScopePrivate ECRAuthorizationTokenScope = "private"
	// ECRScopePublic: ECR Public (public.ecr.aws), whose login API AWS
	// serves from us-east-1 only.
	ECRScopePublic ECRAuthorizationTokenScope = "public"
)

// ECRAuthorizationTokenSpec configures ECR registry logins.
type ECRAuthorizationTokenSpec struct {
	AWSGeneratorSpec `json:",inline"`

	// Scope is private (default: the account's registry, with a
	// proxy_endpoint) or public (ECR Public, asked in us-east-1 whatever
	// region says; no proxy_endpoint).
	// +optional
	Scope ECRAuthorizationTokenScope `json:"scope,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}
// +kubebuilder:printcolumn:name="Region",type=string,JSONPath=`.spec.region`
// +kubebuilder:printcolumn:name="Role",type=string,JSONPath=`.spec.role`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ECRAuthorizationToken generates a login for the account's ECR registry
// (GetAuthorizationToken): username, password, proxy_endpoint and
// expires_at (Unix seconds).
type ECRAuthorizationToken struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ECRAuthorizationTokenSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// ECRAuthorizationTokenList is a list of ECRAuthorizationToken.
type ECRAuthorizationTokenList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ECRAuthorizationToken `json:"items"`
}

// STSSessionTokenSpec configures temporary credentials from GetSessionToken.
type STSSessionTokenSpec struct {
	AWSGeneratorSpec `json:",inline"`

	// RequestParameters are passed to GetSessionToken.
	// +optional
	RequestParameters *STSSessionTokenRequestParameters `json:"requestParameters,omitempty"`
}

// STSSessionTokenRequestParameters are GetSessionToken's parameters.
// +kubebuilder:validation:XValidation:rule="has(self.tokenCode) == has(self.serialNumber)",message="serialNumber and tokenCode go together: the MFA device and its current code"
type STSSessionTokenRequestParameters struct {
	// SessionDuration is the credentials' lifetime in seconds, from 900
	// (15 minutes) to 129600 (36 hours); AWS defaults to 43200 (12 hours).
	// +kubebuilder:validation:Minimum=900
	// +kubebuilder:validation:Maximum=129600
	// +optional
	SessionDuration *int32 `json:"sessionDuration,omitempty"`
	// SerialNumber identifies the MFA device of the IAM user.
	// +kubebuilder:validation:MinLength=9
	// +kubebuilder:validation:MaxLength=256
	// +optional
	SerialNumber *string `json:"serialNumber,omitempty"`
	// TokenCode is the code the MFA device shows.
	// +kubebuilder:validation:Pattern=`^[0-9]{6}$`
	// +optional
	TokenCode *string `json:"tokenCode,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}
// +kubebuilder:printcolumn:name="Region",type=string,JSONPath=`.spec.region`
// +kubebuilder:printcolumn:name="Role",type=string,JSONPath=`.spec.role`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// STSSessionToken generates temporary AWS credentials (GetSessionToken):
// access_key_id, secret_access_key, session_token and expiration (Unix
// seconds).
type STSSessionToken struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec STSSessionTokenSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// STSSessionTokenList is a list of STSSessionToken.
type STSSessionTokenList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []STSSessionToken `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ECRAuthorizationToken{}, &ECRAuthorizationTokenList{}, &STSSessionToken{}, &STSSessionTokenList{})
}
