package v2alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// DefaultSymbolCharacters are the symbols a Password draws from unless told
// otherwise.
const DefaultSymbolCharacters = "~!@#$%^&*()_+`-={}|[]\\:\"<>?,./"

// PasswordSpec configures random passwords. Digits and symbols default to a
// quarter of the length each.
// +kubebuilder:validation:XValidation:rule="(has(self.digits) ? self.digits : self.length / 4) + (has(self.symbols) ? self.symbols : self.length / 4) <= self.length",message="digits + symbols may not exceed length"
// +kubebuilder:validation:XValidation:rule="(has(self.allowRepeat) && self.allowRepeat) || (has(self.digits) ? self.digits : self.length / 4) <= 10",message="without allowRepeat there are only 10 distinct digits: lower digits or set allowRepeat"
// +kubebuilder:validation:XValidation:rule="(has(self.allowRepeat) && self.allowRepeat) || !has(self.symbolCharacters) || (has(self.symbols) ? self.symbols : self.length / 4) <= size(self.symbolCharacters)",message="without allowRepeat symbols may not exceed the number of symbolCharacters"
// +kubebuilder:validation:XValidation:rule="!(has(self.secretKey) && has(self.secretKeys))",message="set secretKey or secretKeys, not both"
// +kubebuilder:validation:XValidation:rule="(has(self.allowRepeat) && self.allowRepeat) || self.length - (has(self.digits) ? self.digits : self.length / 4) - (has(self.symbols) ? self.symbols : self.length / 4) <= ((has(self.noUpper) && self.noUpper) ? 26 : 52)",message="without allowRepeat there are not enough distinct letters for this length: set allowRepeat"
type PasswordSpec struct {
	// Length of the password.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	// +kubebuilder:default=24
	Length int `json:"length"`

	// Digits is how many characters are digits.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Digits *int `json:"digits,omitempty"`

	// Symbols is how many characters are symbols.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Symbols *int `json:"symbols,omitempty"`

	// SymbolCharacters are the symbols to draw from.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +optional
	SymbolCharacters *string `json:"symbolCharacters,omitempty"`

	// NoUpper leaves out upper-case letters.
	// +kubebuilder:default=false
	// +optional
	NoUpper bool `json:"noUpper,omitempty"`

	// AllowRepeat lets a character appear more than once.
	// +kubebuilder:default=false
	// +optional
	AllowRepeat bool `json:"allowRepeat,omitempty"`

	// SecretKey names the output key; absent means "password". Use
	// secretKeys for several passwords.
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +kubebuilder:validation:MaxLength=253
	// +optional
	SecretKey string `json:"secretKey,omitempty"`

	// SecretKeys names the output keys, one password each, all made alike
	// (upstream's field).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[-._a-zA-Z0-9]+$`
	// +listType=set
	// +optional
	SecretKeys []string `json:"secretKeys,omitempty"`

	// Encoding of each password: raw (as generated), base64, base64url,
	// base32 or hex. Length counts the characters before encoding.
	// +kubebuilder:default=raw
	// +optional
	Encoding PasswordEncoding `json:"encoding,omitempty"`
}

// PasswordEncoding is how a generated password is written.
// +kubebuilder:validation:Enum=base64;base64url;base32;hex;raw
type PasswordEncoding string

// Password encodings, as upstream's.
const (
	PasswordEncodingRaw       PasswordEncoding = "raw"
	PasswordEncodingBase64    PasswordEncoding = "base64"
	PasswordEncodingBase64URL PasswordEncoding = "base64url"
	PasswordEncodingBase32    PasswordEncoding = "base32"
	PasswordEncodingHex       PasswordEncoding = "hex"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}
// +kubebuilder:printcolumn:name="Length",type=integer,JSONPath=`.spec.length`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Password generates random passwords.
type Password struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PasswordSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// PasswordList is a list of Password.
type PasswordList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Password `json:"items"`
}

// UUIDSpec configures random (version 4) UUIDs.
type UUIDSpec struct {
	// SecretKey names the output key.
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:default=uuid
	// +optional
	SecretKey string `json:"secretKey,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// UUID generates random version 4 UUIDs.
type UUID struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec UUIDSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// UUIDList is a list of UUID.
type UUIDList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []UUID `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Password{}, &PasswordList{}, &UUID{}, &UUIDList{})
}
