package generators

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
)

// The namespaced kinds: upstream's name, group and shape, eso's spec.

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}

// Password generates random passwords (upstream's kind).
type Password struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec genv1.PasswordSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// PasswordList is a list of Password.
type PasswordList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Password `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}

// UUID generates random version 4 UUIDs (upstream's kind).
type UUID struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec genv1.UUIDSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// UUIDList is a list of UUID.
type UUIDList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []UUID `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}

// ECRAuthorizationToken generates ECR registry credentials (upstream's kind).
type ECRAuthorizationToken struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec genv1.ECRAuthorizationTokenSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// ECRAuthorizationTokenList is a list of ECRAuthorizationToken.
type ECRAuthorizationTokenList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ECRAuthorizationToken `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}

// STSSessionToken generates AWS STS session credentials (upstream's kind).
type STSSessionToken struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec genv1.STSSessionTokenSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// STSSessionTokenList is a list of STSSessionToken.
type STSSessionTokenList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []STSSessionToken `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}

// GCRAccessToken generates Google registry credentials (upstream's kind).
type GCRAccessToken struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec genv1.GCRAccessTokenSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// GCRAccessTokenList is a list of GCRAccessToken.
type GCRAccessTokenList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GCRAccessToken `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}

// VaultDynamicSecret generates a Vault dynamic secret (upstream's kind).
type VaultDynamicSecret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec genv1.VaultDynamicSecretSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// VaultDynamicSecretList is a list of VaultDynamicSecret.
type VaultDynamicSecretList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VaultDynamicSecret `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}

// SSHKey generates SSH key pairs (upstream's kind).
type SSHKey struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec genv1.SSHKeySpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// SSHKeyList is a list of SSHKey.
type SSHKeyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SSHKey `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}

// Fake returns fixed data (upstream's kind).
type Fake struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec genv1.FakeSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// FakeList is a list of Fake.
type FakeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Fake `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}

// MFA generates TOTP tokens (upstream's kind).
type MFA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec genv1.MFASpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// MFAList is a list of MFA.
type MFAList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MFA `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Password{}, &PasswordList{}, &UUID{}, &UUIDList{}, &ECRAuthorizationToken{}, &ECRAuthorizationTokenList{}, &STSSessionToken{}, &STSSessionTokenList{}, &GCRAccessToken{}, &GCRAccessTokenList{}, &VaultDynamicSecret{}, &VaultDynamicSecretList{}, &SSHKey{}, &SSHKeyList{}, &Fake{}, &FakeList{}, &MFA{}, &MFAList{})
}
