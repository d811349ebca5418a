package v2alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// StatePolicy says whether eso records what a generator made.
// +kubebuilder:validation:Enum=Track;Ignore
type StatePolicy string

const (
	// StateTrack records each generated value's state in a GeneratorState, so
	// it is revoked (e.g. a Vault lease) once the value is replaced.
	StateTrack StatePolicy = "Track"
	// StateIgnore records nothing: replaced values are never revoked.
	StateIgnore StatePolicy = "Ignore"
)

// GeneratorSpec is shared by Generator and ClusterGenerator.
type GeneratorSpec struct {
	// RefreshInterval is how often eso revalidates the generator configuration.
	// Values are generated when the ExternalSecrets using the generator
	// refresh, not on this interval.
	// +kubebuilder:default="5m"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) == duration('0s') || duration(self) >= duration('1s')",message="refreshInterval must be 0s or at least 1s"
	RefreshInterval *metav1.Duration `json:"refreshInterval,omitempty"`

	// Controller is the controller class: only an eso started with the same
	// --controller-class acts on this generator.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Controller string `json:"controller,omitempty"`

	// GatingPolicy Enabled keeps ExternalSecrets from generating through this
	// generator while it is not Ready.
	// +kubebuilder:default=Enabled
	// +optional
	GatingPolicy ssv2.GatingPolicy `json:"gatingPolicy,omitempty"`

	// ProviderConfig names the generator kind's configuration and where the
	// generator runs.
	ProviderConfig ProviderConfig `json:"providerConfig"`

	// StatePolicy Track records what each generation made in a
	// GeneratorState, so it can be revoked after it was replaced.
	// +kubebuilder:default=Track
	// +optional
	StatePolicy StatePolicy `json:"statePolicy,omitempty"`

	// StateSpec configures the GeneratorStates of this generator.
	// +optional
	StateSpec *StateSpec `json:"stateSpec,omitempty"`
}

// ProviderConfig names a generator configuration and where it runs.
type ProviderConfig struct {
	// Address of an out-of-process provider (eso --mode=provider). Empty
	// means the generator runs in process.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Address string `json:"address,omitempty"`

	// Auth is how eso authenticates to an out-of-process provider.
	// +optional
	Auth *ssv2.ProviderAuth `json:"auth,omitempty"`

	// ProviderRef names the generator configuration object
	// (group provider.generator.external-secrets.io), e.g. a Password.
	ProviderRef ProviderRef `json:"providerRef"`
}

// ProviderRef names a generator configuration object.
type ProviderRef struct {
	// Kind of the generator configuration, e.g. Password, UUID, VaultDynamicSecret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace of the configuration. A Generator may only name its own
	// namespace (or leave this empty); a ClusterGenerator must set it.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// StateSpec configures GeneratorStates.
type StateSpec struct {
	// GarbageCollectionDeadline is how long the state of a replaced value is
	// kept (and the value left valid) before eso revokes it and deletes the
	// state: consumers get this long to pick up the new value.
	// +kubebuilder:default="5m"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="garbageCollectionDeadline must be a valid duration"
	GarbageCollectionDeadline *metav1.Duration `json:"garbageCollectionDeadline,omitempty"`

	// StatePatch is a JSON merge patch applied to each GeneratorState when it
	// is created, e.g. to add labels or annotations other tools act on.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +optional
	StatePatch *apiextensionsv1.JSON `json:"statePatch,omitempty"`
}

// GeneratorStatus is the observed state of a generator.
type GeneratorStatus struct {
	// Conditions: Ready says whether the generator configuration is usable.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=gen,categories={external-secrets}
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.providerConfig.providerRef.kind`
// +kubebuilder:printcolumn:name="Config",type=string,JSONPath=`.spec.providerConfig.providerRef.name`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.spec.statePolicy`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Generator makes a generator configuration of its own namespace usable by
// the ExternalSecrets of that namespace.
type Generator struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GeneratorSpec   `json:"spec"`
	Status GeneratorStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// GeneratorList is a list of Generators.
type GeneratorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Generator `json:"items"`
}

// ClusterGeneratorSpec adds who may use the generator and whose credentials
// it uses.
// +kubebuilder:validation:XValidation:rule="has(self.providerConfig.providerRef.namespace) && size(self.providerConfig.providerRef.namespace) > 0",message="providerConfig.providerRef.namespace is required: a ClusterGenerator points at a generator configuration in a namespace"
type ClusterGeneratorSpec struct {
	GeneratorSpec `json:",inline"`

	// AuthenticationScope says where the generator resolves the credentials
	// its configuration references: in the configuration's namespace
	// (ProviderNamespace), or in the namespace of the ExternalSecret using it
	// (ManifestNamespace). The same field and values as ClusterSecretStore's,
	// so one vocabulary covers both cluster kinds.
	// +kubebuilder:default=ProviderNamespace
	// +optional
	AuthenticationScope ssv2.AuthenticationScope `json:"authenticationScope,omitempty"`

	// Conditions restrict which namespaces may use the generator. A namespace
	// may use it when any condition matches; no conditions means every
	// namespace.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []ssv2.ClusterSecretStoreCondition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cgen,categories={external-secrets}
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.providerConfig.providerRef.kind`
// +kubebuilder:printcolumn:name="Config",type=string,JSONPath=`.spec.providerConfig.providerRef.name`
// +kubebuilder:printcolumn:name="Namespace",type=string,JSONPath=`.spec.providerConfig.providerRef.namespace`
// +kubebuilder:printcolumn:name="Scope",type=string,JSONPath=`.spec.authenticationScope`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterGenerator makes a namespaced generator configuration usable from the
// namespaces its conditions allow.
type ClusterGenerator struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterGeneratorSpec `json:"spec"`
	Status GeneratorStatus      `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterGeneratorList is a list of ClusterGenerators.
type ClusterGeneratorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterGenerator `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Generator{}, &GeneratorList{}, &ClusterGenerator{}, &ClusterGeneratorList{})
}
