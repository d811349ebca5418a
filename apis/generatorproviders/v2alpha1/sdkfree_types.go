package v2alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
)

// Generators that need no SDK: SSHKey, Fake and MFA, with upstream's
// fields. Their bounds are eso's: a tenant's configuration decides how much
// CPU each generation costs.

// SSHKeyType is the algorithm of a generated SSH key.
// +kubebuilder:validation:Enum=rsa;ecdsa;ed25519
type SSHKeyType string

// SSH key types, as upstream names them.
const (
	SSHKeyRSA     SSHKeyType = "rsa"
	SSHKeyECDSA   SSHKeyType = "ecdsa"
	SSHKeyEd25519 SSHKeyType = "ed25519"
)

// SSHKeySpec configures SSH key pairs. keySize is the RSA modulus (2048,
// 3072 or 4096 bits; default 2048) or the ECDSA curve (256, 384 or 521;
// default 256); an Ed25519 key has one size and ignores it.
// +kubebuilder:validation:XValidation:rule="!has(self.keySize) || (has(self.keyType) && self.keyType != 'rsa') || self.keySize in [2048, 3072, 4096]",message="an rsa keySize is 2048, 3072 or 4096"
// +kubebuilder:validation:XValidation:rule="!has(self.keySize) || !has(self.keyType) || self.keyType != 'ecdsa' || self.keySize in [256, 384, 521]",message="an ecdsa keySize is 256, 384 or 521 (the curves P-256, P-384 and P-521)"
type SSHKeySpec struct {
	// KeyType is rsa, ecdsa or ed25519.
	// +kubebuilder:default=rsa
	// +optional
	KeyType SSHKeyType `json:"keyType,omitempty"`

	// KeySize is the RSA modulus in bits or the ECDSA curve size.
	// +kubebuilder:validation:Minimum=256
	// +kubebuilder:validation:Maximum=4096
	// +optional
	KeySize *int `json:"keySize,omitempty"`

	// Comment is written into both keys, e.g. user@host.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[^\n\r]*$`
	// +optional
	Comment string `json:"comment,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.keyType`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// SSHKey generates SSH key pairs: privateKey in OpenSSH format and
// publicKey as an authorized_keys line.
type SSHKey struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec SSHKeySpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// SSHKeyList is a list of SSHKey.
type SSHKeyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SSHKey `json:"items"`
}

// FakeSpec configures a generator that returns fixed data, for tests and
// demos.
type FakeSpec struct {
	// Controller is the controller class: only an eso started with the same
	// --controller-class generates with it.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Controller string `json:"controller,omitempty"`

	// Data is returned as is, one key each.
	// +kubebuilder:validation:MaxProperties=256
	// +optional
	Data map[string]string `json:"data,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Fake returns its spec's data each time it generates.
type Fake struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec FakeSpec `json:"spec,omitempty"`
}

// ControllerClass implements plugin.Classed.
func (f *Fake) ControllerClass() string { return f.Spec.Controller }

// +kubebuilder:object:root=true

// FakeList is a list of Fake.
type FakeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Fake `json:"items"`
}

// MFASpec configures time-based one-time passwords (TOTP, RFC 6238) from a
// shared seed.
type MFASpec struct {
	// Secret is the key of a Secret, in the generator's credentials
	// namespace, holding the seed in base32 (as authenticator apps take it;
	// spaces and padding are ignored).
	Secret provv1.SecretKeySelector `json:"secret"`

	// Length is the number of digits of a token (RFC 4226 asks for at least
	// 6; upstream accepts fewer).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=6
	// +optional
	Length int `json:"length,omitempty"`

	// TimePeriod is how many seconds a token is valid.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	// +kubebuilder:default=30
	// +optional
	TimePeriod int `json:"timePeriod,omitempty"`

	// Algorithm is the HMAC hash, in any case: sha1 (RFC 6238's default),
	// sha256, sha384, sha512 or sha512_256; another is refused when the
	// generator checks its configuration. Upstream's MFA kind
	// (generators.external-secrets.io) ignores it and always uses sha1, as
	// upstream does, so it takes any spelling there.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Algorithm string `json:"algorithm,omitempty"`

	// When pins the time a token is made for; empty means now. For tests
	// and reproducible tokens.
	// +optional
	When *metav1.Time `json:"when,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}
// +kubebuilder:printcolumn:name="Length",type=integer,JSONPath=`.spec.length`
// +kubebuilder:printcolumn:name="Period",type=integer,JSONPath=`.spec.timePeriod`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// MFA generates TOTP tokens: token, and timeLeft, the seconds it stays
// valid.
type MFA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec MFASpec `json:"spec"`
}

// +kubebuilder:object:root=true

// MFAList is a list of MFA.
type MFAList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MFA `json:"items"`
}

func init() {
	SchemeBuilder.Register(&SSHKey{}, &SSHKeyList{}, &Fake{}, &FakeList{}, &MFA{}, &MFAList{})
}
