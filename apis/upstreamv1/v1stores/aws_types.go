package v1stores

import "github.com/eso-dev/eso/apis/upstreamv1"

// AWSServiceType is the AWS service a store reads from and writes to.
// +kubebuilder:validation:Enum=SecretsManager;ParameterStore;CertificateManager
type AWSServiceType string

// AWS services.
const (
	AWSServiceSecretsManager     AWSServiceType = "SecretsManager"
	AWSServiceParameterStore     AWSServiceType = "ParameterStore"
	AWSServiceCertificateManager AWSServiceType = "CertificateManager"
)

// SessionTagsPolicy says which session tags are passed when a role is assumed.
// +kubebuilder:validation:Enum=None;Simple;Custom
type SessionTagsPolicy string

// Session tag policies.
const (
	// SessionTagsPolicyNone passes no tags of its own.
	SessionTagsPolicyNone SessionTagsPolicy = "None"
	// SessionTagsPolicySimple passes esoNamespace, esoStoreName and esoStoreKind.
	SessionTagsPolicySimple SessionTagsPolicy = "Simple"
	// SessionTagsPolicyCustom passes those three and customSessionTags.
	SessionTagsPolicyCustom SessionTagsPolicy = "Custom"
)

// AWSProvider configures a store backed by AWS Secrets Manager, Systems
// Manager Parameter Store or Certificate Manager.
type AWSProvider struct {
	// Service is the AWS service the store uses.
	Service AWSServiceType `json:"service"`

	// Auth says where the credentials come from. Without secretRef or jwt,
	// the AWS SDK's default chain (environment, IRSA, instance role) is used.
	// +optional
	Auth AWSAuth `json:"auth,omitempty"`

	// Role is the ARN of an IAM role to assume with those credentials.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Role string `json:"role,omitempty"`

	// Region of the service, e.g. eu-central-1.
	// +kubebuilder:validation:MaxLength=64
	Region string `json:"region"`

	// AdditionalRoles are role ARNs assumed one after the other, before role.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=2048
	// +optional
	AdditionalRoles []string `json:"additionalRoles,omitempty"`

	// ExternalID is passed when a role is assumed.
	// +kubebuilder:validation:MaxLength=1224
	// +optional
	ExternalID string `json:"externalID,omitempty"`

	// SessionTags are passed when a role is assumed.
	// +kubebuilder:validation:MaxItems=50
	// +optional
	SessionTags []*Tag `json:"sessionTags,omitempty"`

	// SecretsManager tunes how secrets are deleted in Secrets Manager
	// (PushSecret with deletionPolicy Delete).
	// +optional
	SecretsManager *SecretsManager `json:"secretsManager,omitempty"`

	// TransitiveTagKeys are the session tag keys that stay set through role chaining.
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MaxLength=128
	// +optional
	TransitiveTagKeys []string `json:"transitiveTagKeys,omitempty"`

	// SessionTagsPolicy says which tags eso adds when it assumes a role; the
	// role then needs sts:TagSession.
	// +kubebuilder:default=None
	// +optional
	SessionTagsPolicy SessionTagsPolicy `json:"sessionTagsPolicy,omitempty"`

	// CustomSessionTags are added to the three eso tags when sessionTagsPolicy is Custom.
	// +kubebuilder:validation:MaxProperties=50
	// +kubebuilder:validation:XValidation:rule="!('esoNamespace' in self) && !('esoStoreName' in self) && !('esoStoreKind' in self)",message="customSessionTags may not set esoNamespace, esoStoreName or esoStoreKind: eso sets those itself"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 128 && size(self[k]) <= 256)",message="a session tag key has at most 128 characters and its value at most 256"
	// +optional
	CustomSessionTags map[string]string `json:"customSessionTags,omitempty"`

	// Prefix is prepended to every remote key.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Prefix string `json:"prefix,omitempty"`
}

// AWSAuth says where the AWS credentials come from: static keys in a
// Secret, or a ServiceAccount token exchanged for the role's credentials.
type AWSAuth struct {
	// SecretRef reads access keys from a Secret.
	// +optional
	SecretRef *AWSAuthSecretRef `json:"secretRef,omitempty"`

	// JWTAuth exchanges a ServiceAccount token (IRSA style).
	// +optional
	JWTAuth *AWSJWTAuth `json:"jwt,omitempty"`
}

// AWSAuthSecretRef names the Secret keys holding static AWS credentials.
type AWSAuthSecretRef struct {
	// AccessKeyID is the access key ID.
	// +optional
	AccessKeyID upstreamv1.SecretKeySelector `json:"accessKeyIDSecretRef,omitempty"`

	// SecretAccessKey is the secret access key.
	// +optional
	SecretAccessKey upstreamv1.SecretKeySelector `json:"secretAccessKeySecretRef,omitempty"`

	// SessionToken is needed when the keys are temporary credentials.
	// +optional
	SessionToken *upstreamv1.SecretKeySelector `json:"sessionTokenSecretRef,omitempty"`
}

// AWSJWTAuth names the ServiceAccount whose token is exchanged for AWS credentials.
type AWSJWTAuth struct {
	// +optional
	ServiceAccountRef *upstreamv1.ServiceAccountSelector `json:"serviceAccountRef,omitempty"`
}

// SecretsManager holds Secrets Manager settings used when a secret is deleted.
type SecretsManager struct {
	// ForceDeleteWithoutRecovery deletes at once, with no recovery window.
	// Not together with recoveryWindowInDays.
	// +optional
	ForceDeleteWithoutRecovery bool `json:"forceDeleteWithoutRecovery,omitempty"`

	// RecoveryWindowInDays is how long (AWS accepts 7 to 30 days) a deleted
	// secret can still be restored. Not together with forceDeleteWithoutRecovery.
	// +optional
	RecoveryWindowInDays int64 `json:"recoveryWindowInDays,omitempty"`
}

// Tag is an AWS tag.
type Tag struct {
	// +kubebuilder:validation:MaxLength=128
	Key string `json:"key"`
	// +kubebuilder:validation:MaxLength=256
	Value string `json:"value"`
}
