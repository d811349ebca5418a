package v2alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// FakeSpec is a static set of secrets, for demos and tests.
type FakeSpec struct {
	// Data is the provider's content.
	// +kubebuilder:validation:MaxItems=1024
	// +listType=atomic
	// +optional
	Data []FakeSecret `json:"data,omitempty"`
}

// FakeSecret is one secret of the Fake provider, optionally versioned.
type FakeSecret struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	Key string `json:"key"`
	// Value of the secret. A JSON object value can be read per property and
	// extracted with dataFrom.
	Value string `json:"value"`
	// Version of this value; empty is the current version. A key may appear once
	// per version.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Version string `json:"version,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=fakeprovider,categories={external-secrets,external-secrets-providers}
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Fake is a provider configuration holding its secrets inline.
type Fake struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec FakeSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// FakeList is a list of Fake.
type FakeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Fake `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Fake{}, &FakeList{})
}
