package v2alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels and annotations of the generator state protocol.
const (
	// LabelExternalSecret names the ExternalSecret a GeneratorState belongs to.
	LabelExternalSecret = "generator.external-secrets.io/external-secret"
	// LabelIntent identifies the rotation a GeneratorState was made for: a
	// digest of the ExternalSecret's generation and last sync time. A target
	// Secret already holding a state of the current intent has been rotated.
	LabelIntent = "generator.external-secrets.io/intent"
	// AnnotationStates on a target Secret lists the GeneratorStates whose
	// values it holds, comma-separated. A state listed there is in use and is
	// never revoked.
	AnnotationStates = "generator.external-secrets.io/states"
	// AnnotationGCDelay on a GeneratorState is how long its value stays
	// valid once replaced: the generator's garbageCollectionDeadline when the
	// value was made, so a later edit or deletion of the generator does not
	// change it.
	AnnotationGCDelay = "generator.external-secrets.io/garbage-collection-delay"
	// AnnotationProvenance on a GeneratorState is eso's signature over what
	// the state says (an HMAC with a key only eso holds). eso revokes with,
	// and counts as rotated, only states whose signature holds.
	AnnotationProvenance = "generator.external-secrets.io/provenance"
	// FinalizerCleanup keeps a GeneratorState until its value was revoked.
	FinalizerCleanup = "generator.external-secrets.io/cleanup"
)

// GeneratorStateSpec records what one generation made.
type GeneratorStateSpec struct {
	// Generator is the generator as the ExternalSecret referenced it.
	Generator GeneratorReference `json:"generator"`

	// ProviderRef is the generator configuration that made the value; the
	// cleanup reads it again.
	ProviderRef ProviderRef `json:"providerRef"`

	// CredentialsNamespace is where the generator resolved its credentials.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	CredentialsNamespace string `json:"credentialsNamespace,omitempty"`

	// State is what the generator needs to revoke the value (e.g. a Vault
	// lease id). Never the value itself.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +optional
	State *apiextensionsv1.JSON `json:"state,omitempty"`

	// GarbageCollectionDeadline, once set, is when eso revokes the value and
	// deletes this state, unless a target Secret still lists it (then the
	// deadline is cleared). Unset means the value is in use.
	// +optional
	GarbageCollectionDeadline *metav1.Time `json:"garbageCollectionDeadline,omitempty"`
}

// GeneratorReference is a generator as an ExternalSecret references it.
type GeneratorReference struct {
	// +kubebuilder:validation:MaxLength=253
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// GeneratorStateStatus is the observed state of a GeneratorState.
type GeneratorStateStatus struct {
	// Conditions: Cleanup says why a due revocation has not happened yet.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// GeneratorState conditions: Cleanup says why a due revocation has not
// happened yet; Verified=False marks a state eso did not write (forged or
// altered), which eso never uses.
const (
	ConditionCleanup  = "Cleanup"
	ConditionVerified = "Verified"

	// ReasonProvenanceInvalid: Verified=False, eso did not sign the state.
	ReasonProvenanceInvalid = "ProvenanceInvalid"
	// ReasonRevocationFailed: Cleanup=False, revoking the value failed.
	ReasonRevocationFailed = "RevocationFailed"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=gs,categories={external-secrets}
// +kubebuilder:printcolumn:name="ExternalSecret",type=string,JSONPath=`.metadata.labels.generator\.external-secrets\.io/external-secret`
// +kubebuilder:printcolumn:name="Generator",type=string,JSONPath=`.spec.generator.name`
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.providerRef.kind`
// +kubebuilder:printcolumn:name="Deadline",type=string,JSONPath=`.spec.garbageCollectionDeadline`,description="When the state is revoked unless in use (a future time prints as a time, not an age)"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// GeneratorState records what one generation made for an ExternalSecret, so
// that it can be revoked once the value was replaced.
type GeneratorState struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GeneratorStateSpec   `json:"spec"`
	Status GeneratorStateStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// GeneratorStateList is a list of GeneratorStates.
type GeneratorStateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GeneratorState `json:"items"`
}

func init() {
	SchemeBuilder.Register(&GeneratorState{}, &GeneratorStateList{})
}
