package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// PushSecretStoreRef names a store to push to, by name or by labels. With
// both, as upstream, the labelSelector selects and the name is not read.
// +kubebuilder:validation:XValidation:rule="has(self.name) || has(self.labelSelector)",message="a store reference needs a name or a labelSelector"
type PushSecretStoreRef struct {
	// Name of the store.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	Name string `json:"name,omitempty"`

	// LabelSelector selects every store of Kind with these labels (in the
	// PushSecret's namespace for SecretStores).
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// Kind of the store: SecretStore (same namespace) or ClusterSecretStore.
	// +kubebuilder:validation:Enum=SecretStore;ClusterSecretStore
	// +kubebuilder:default=SecretStore
	// +optional
	Kind string `json:"kind,omitempty"`

	// APIVersion of the store: secretstore.external-secrets.io/v2alpha1, or
	// external-secrets.io/v1 (upstream's stores). Absent means the v1 store of
	// that name when one exists, else the v2alpha1 store.
	// +kubebuilder:validation:Enum="secretstore.external-secrets.io/v2alpha1";"external-secrets.io/v1"
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
}

// UpdatePolicy says whether eso overwrites a remote secret that exists.
// +kubebuilder:validation:Enum=Replace;IfNotExists
type UpdatePolicy string

const (
	// UpdatePolicyReplace writes the value whenever it differs.
	UpdatePolicyReplace UpdatePolicy = "Replace"
	// UpdatePolicyIfNotExists writes only remote secrets that do not exist.
	UpdatePolicyIfNotExists UpdatePolicy = "IfNotExists"
)

// DeletionPolicy says what happens to what a PushSecret pushed once it no
// longer pushes it.
// +kubebuilder:validation:Enum=Delete;None
type DeletionPolicy string

const (
	// DeletionPolicyDelete deletes what this PushSecret pushed when it is
	// deleted, or when an entry, key or store leaves its spec.
	DeletionPolicyDelete DeletionPolicy = "Delete"
	// DeletionPolicyNone never deletes remote secrets.
	DeletionPolicyNone DeletionPolicy = "None"
)

// AdoptionPolicy says whether eso takes over remote secrets it did not create.
// +kubebuilder:validation:Enum=Never;Adopt
type AdoptionPolicy string

const (
	// AdoptionPolicyNever refuses to write a remote secret without eso's
	// mark: someone else made it.
	AdoptionPolicyNever AdoptionPolicy = "Never"
	// AdoptionPolicyAdopt marks such a secret as eso's and writes it; from
	// then on it is eso's, and deletionPolicy Delete deletes it too.
	AdoptionPolicyAdopt AdoptionPolicy = "Adopt"
)

// ConversionStrategy undoes a key conversion of ExternalSecrets before the
// key is pushed.
// +kubebuilder:validation:Enum=None;ReverseUnicode
type ConversionStrategy string

const (
	// ConversionNone pushes keys as they are.
	ConversionNone ConversionStrategy = "None"
	// ConversionReverseUnicode turns "_Uxxxx_" back into the character it
	// stands for (the Unicode conversionStrategy of ExternalSecrets).
	ConversionReverseUnicode ConversionStrategy = "ReverseUnicode"
)

// PushSecretSelector says what is pushed: one Secret, the Secrets with some
// labels, or a generated value.
// +kubebuilder:validation:XValidation:rule="[has(self.secret), has(self.generatorRef)].filter(x, x).size() == 1",message="selector needs exactly one of secret or generatorRef"
type PushSecretSelector struct {
	// Secret of the PushSecret's namespace.
	// +optional
	Secret *PushSecretSecret `json:"secret,omitempty"`

	// GeneratorRef generates the value once and keeps it.
	// +optional
	GeneratorRef *esv1.GeneratorRef `json:"generatorRef,omitempty"`
}

// PushSecretSecret selects Secrets of the PushSecret's namespace.
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.selector)",message="selector.secret needs exactly one of name or selector"
type PushSecretSecret struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	Name string `json:"name,omitempty"`

	// Selector selects Secrets by label; each is pushed with the same entries.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// PushSecretRemoteRef is where a value goes in the provider.
type PushSecretRemoteRef struct {
	// RemoteKey is the name of the remote secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	RemoteKey string `json:"remoteKey"`

	// Property, if set, is the field of a JSON object secret to set; its
	// other fields are kept.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Property string `json:"property,omitempty"`
}

// PushSecretMatch pairs a key of the Secret with a remote secret.
type PushSecretMatch struct {
	// SecretKey is the key pushed; absent pushes the whole Secret as one JSON
	// object of its keys.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	SecretKey string `json:"secretKey,omitempty"`

	// RemoteRef is where it goes.
	RemoteRef PushSecretRemoteRef `json:"remoteRef"`
}

// PushSecretData is one value pushed.
type PushSecretData struct {
	// Match pairs a key with a remote secret.
	Match PushSecretMatch `json:"match"`

	// Metadata is provider-specific (e.g. AWS tags and KMS key), in
	// upstream's form: apiVersion kubernetes.external-secrets.io/v1alpha1,
	// kind PushSecretMetadata, spec.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Metadata *apiextensionsv1.JSON `json:"metadata,omitempty"`

	// ConversionStrategy undoes a key conversion before pushing.
	// +kubebuilder:default=None
	// +optional
	ConversionStrategy ConversionStrategy `json:"conversionStrategy,omitempty"`
}

// PushSecretDataTo pushes every key that matches, each to a remote secret
// named by its rewritten key, or all together to remoteKey.
// +kubebuilder:validation:XValidation:rule="has(self.storeRef) && (has(self.storeRef.name) || has(self.storeRef.labelSelector))",message="storeRef must specify either name or labelSelector"
// +kubebuilder:validation:XValidation:rule="!has(self.remoteKey) || !has(self.rewrite) || size(self.rewrite) == 0",message="remoteKey and rewrite are mutually exclusive: rewrite is only supported in per-key mode (without remoteKey)"
type PushSecretDataTo struct {
	// StoreRef is the store this entry pushes to; a named store must also be
	// in secretStoreRefs.
	// +optional
	StoreRef *PushSecretStoreRef `json:"storeRef,omitempty"`

	// RemoteKey, if set, receives all matching keys as one JSON object.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	RemoteKey string `json:"remoteKey,omitempty"`

	// Match selects keys; absent selects every key.
	// +optional
	Match *PushSecretDataToMatch `json:"match,omitempty"`

	// Rewrite renames each key, in order, into its remote key.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	Rewrite []PushSecretRewrite `json:"rewrite,omitempty"`

	// Metadata is provider-specific, applied to every remote secret.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Metadata *apiextensionsv1.JSON `json:"metadata,omitempty"`

	// ConversionStrategy undoes a key conversion before matching.
	// +kubebuilder:default=None
	// +optional
	ConversionStrategy ConversionStrategy `json:"conversionStrategy,omitempty"`
}

// PushSecretDataToMatch selects keys by regular expression.
type PushSecretDataToMatch struct {
	// RegExp is a Go (RE2) regular expression over key names.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	RegExp string `json:"regexp,omitempty"`
}

// PushSecretRewrite renames a key by regular expression or template.
// +kubebuilder:validation:XValidation:rule="has(self.regexp) != has(self.transform)",message="exactly one of regexp or transform must be set"
type PushSecretRewrite struct {
	// +optional
	Regexp *esv1.ExternalSecretRewriteRegexp `json:"regexp,omitempty"`
	// +optional
	Transform *esv1.ExternalSecretRewriteTransform `json:"transform,omitempty"`
}

// PushSecretSpec is what a PushSecret pushes, where, and how.
// +kubebuilder:validation:XValidation:rule="!has(self.adoptionPolicy) || self.adoptionPolicy != 'Adopt' || !has(self.updatePolicy) || self.updatePolicy == 'Replace'",message="adoptionPolicy Adopt needs updatePolicy Replace: IfNotExists never writes a secret that exists"
type PushSecretSpec struct {
	// RefreshInterval is how often the remote secrets are checked and
	// repaired; a change of the source Secret is pushed at once. "0s" pushes
	// only on changes.
	// +kubebuilder:default="1h0m0s"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) == duration('0s') || duration(self) >= duration('1s')",message="refreshInterval must be 0s or at least 1s"
	RefreshInterval *metav1.Duration `json:"refreshInterval,omitempty"`

	// SecretStoreRefs are the stores pushed to.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	SecretStoreRefs []PushSecretStoreRef `json:"secretStoreRefs"`

	// UpdatePolicy Replace writes a remote secret whenever it differs;
	// IfNotExists only creates.
	// +kubebuilder:default=Replace
	// +optional
	UpdatePolicy UpdatePolicy `json:"updatePolicy,omitempty"`

	// DeletionPolicy Delete removes what this PushSecret pushed when it no
	// longer pushes it; None never deletes.
	// +kubebuilder:default=None
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// AdoptionPolicy Adopt lets eso take over a remote secret it did not
	// create; Never (the default) refuses and says which secret blocked.
	// +kubebuilder:default=Never
	// +optional
	AdoptionPolicy AdoptionPolicy `json:"adoptionPolicy,omitempty"`

	// Selector says what is pushed.
	Selector PushSecretSelector `json:"selector"`

	// Data lists the values pushed.
	// +kubebuilder:validation:MaxItems=1024
	// +listType=atomic
	// +optional
	Data []PushSecretData `json:"data,omitempty"`

	// DataTo pushes many keys at once; data wins over dataTo for a key.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	DataTo []PushSecretDataTo `json:"dataTo,omitempty"`

	// Template reshapes the source Secret, in memory, before it is pushed.
	// +optional
	Template *esv1.ExternalSecretTemplate `json:"template,omitempty"`
}

// SyncedPushSecretsMap is what was pushed: by store ("<Kind>/<name>"), by
// remote secret ("<remoteKey>" or "<remoteKey>/<property>").
type SyncedPushSecretsMap map[string]map[string]PushSecretData

// PushSecretStatus is the observed state of a PushSecret.
type PushSecretStatus struct {
	// RefreshTime is when the remote secrets were last checked and found
	// (or made) as they should be.
	// +nullable
	// +optional
	RefreshTime metav1.Time `json:"refreshTime,omitempty"`

	// SyncedResourceVersion is the generation of the PushSecret and the
	// resourceVersion of its source last pushed.
	// +optional
	SyncedResourceVersion string `json:"syncedResourceVersion,omitempty"`

	// SyncedPushSecrets is what this PushSecret pushed, by store; it is what
	// deletionPolicy Delete deletes.
	// +optional
	SyncedPushSecrets SyncedPushSecretsMap `json:"syncedPushSecrets,omitempty"`

	// Conditions: Ready says whether every store holds what it should.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ConditionReady is the condition reporting whether every store holds what
// the PushSecret pushes.
const ConditionReady = "Ready"

// Reasons of a PushSecret's Ready condition (upstream's names where they exist).
const (
	// ReasonSynced: every store holds what it should.
	ReasonSynced = "Synced"
	// ReasonErrored: a push or deletion failed; the message says where.
	ReasonErrored = "Errored"
	// ReasonSourceDeleted: the source Secret is gone; with deletionPolicy
	// Delete what was pushed has been deleted.
	ReasonSourceDeleted = "SourceDeleted"
	// ReasonNotOwned: a remote secret exists that eso did not create, and
	// adoptionPolicy is Never; or, through a ClusterSecretStore, another
	// PushSecret holds it.
	ReasonNotOwned = "NotOwned"
	// ReasonRefusedByStore: a store's pushPolicy refuses what the
	// PushSecret asks of it (adoption, deletion, a remote key outside the
	// namespace's prefix).
	ReasonRefusedByStore = "RefusedByStore"
	// ReasonLoopRefused: the source Secret was written by an ExternalSecret
	// from a store this PushSecret pushes to.
	ReasonLoopRefused = "LoopRefused"
	// ReasonInvalidSpec: the object holds a value eso cannot decode.
	ReasonInvalidSpec = "InvalidSpec"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Namespaced,shortName=ps,categories={external-secrets}
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Last Sync",type=date,JSONPath=`.status.refreshTime`

// PushSecret pushes a Kubernetes Secret (or a generated value) to stores.
type PushSecret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PushSecretSpec   `json:"spec,omitempty"`
	Status PushSecretStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PushSecretList is a list of PushSecrets.
type PushSecretList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PushSecret `json:"items"`
}

// ClusterPushSecretSpec creates a PushSecret in every selected namespace.
type ClusterPushSecretSpec struct {
	// PushSecretSpec is the spec of each PushSecret.
	PushSecretSpec PushSecretSpec `json:"pushSecretSpec"`

	// RefreshInterval is how often the selected namespaces are checked again
	// (they are watched too).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) == duration('0s') || duration(self) >= duration('1s')",message="refreshTime must be 0s or at least 1s"
	RefreshInterval *metav1.Duration `json:"refreshTime,omitempty"`

	// PushSecretName names each PushSecret; default the ClusterPushSecret's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	PushSecretName string `json:"pushSecretName,omitempty"`

	// PushSecretMetadata are the labels and annotations of each PushSecret.
	// +optional
	PushSecretMetadata PushSecretMetadata `json:"pushSecretMetadata,omitempty"`

	// NamespaceSelectors select the namespaces; a namespace matching any gets
	// a PushSecret.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	NamespaceSelectors []*metav1.LabelSelector `json:"namespaceSelectors,omitempty"`
}

// PushSecretMetadata are the labels and annotations of a created PushSecret.
type PushSecretMetadata struct {
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// ClusterPushSecretNamespaceFailure is a namespace whose PushSecret could
// not be written.
type ClusterPushSecretNamespaceFailure struct {
	Namespace string `json:"namespace"`
	// +optional
	Reason string `json:"reason,omitempty"`
}

// ClusterPushSecretStatus is the observed state of a ClusterPushSecret.
type ClusterPushSecretStatus struct {
	// +optional
	FailedNamespaces []ClusterPushSecretNamespaceFailure `json:"failedNamespaces,omitempty"`
	// +optional
	ProvisionedNamespaces []string `json:"provisionedNamespaces,omitempty"`
	// +optional
	PushSecretName string `json:"pushSecretName,omitempty"`
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories={external-secrets}
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`

// ClusterPushSecret creates a PushSecret in every selected namespace.
type ClusterPushSecret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterPushSecretSpec   `json:"spec,omitempty"`
	Status ClusterPushSecretStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterPushSecretList is a list of ClusterPushSecrets.
type ClusterPushSecretList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterPushSecret `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PushSecret{}, &PushSecretList{}, &ClusterPushSecret{}, &ClusterPushSecretList{})
}
