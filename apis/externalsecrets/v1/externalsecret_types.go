package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Store APIs eso serves. An absent secretStoreRef.apiVersion means the v1
// store of that kind and name when one exists (upstream manifests have no
// such field and mean v1), else the v2alpha1 store.
const (
	StoreAPIVersionV2Alpha1 = "secretstore.external-secrets.io/v2alpha1"
	StoreAPIVersionV1       = "external-secrets.io/v1"
)

// SecretStoreRef names the store an ExternalSecret reads from.
type SecretStoreRef struct {
	// Name of the store.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

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

// CreationPolicy says how the target Secret is created and owned.
// +kubebuilder:validation:Enum=Owner;Orphan;Merge;CreateOrMerge;None
type CreationPolicy string

const (
	// CreatePolicyOwner creates the Secret with the ExternalSecret as its controller owner.
	CreatePolicyOwner CreationPolicy = "Owner"
	// CreatePolicyOrphan creates the Secret without an owner; it outlives the ExternalSecret.
	CreatePolicyOrphan CreationPolicy = "Orphan"
	// CreatePolicyMerge merges the data into an existing Secret and never creates one.
	CreatePolicyMerge CreationPolicy = "Merge"
	// CreatePolicyCreateOrMerge merges into the Secret, creating it (without
	// an owner) when it does not exist.
	CreatePolicyCreateOrMerge CreationPolicy = "CreateOrMerge"
	// CreatePolicyNone writes no Secret.
	CreatePolicyNone CreationPolicy = "None"
)

// DeletionPolicy says what happens to the target Secret when the provider no
// longer has the referenced secrets.
// +kubebuilder:validation:Enum=Delete;Merge;Retain
type DeletionPolicy string

const (
	// DeletionPolicyDelete deletes the Secret once none of its remote secrets exist.
	DeletionPolicyDelete DeletionPolicy = "Delete"
	// DeletionPolicyRetain keeps the Secret as it was and reports the error.
	DeletionPolicyRetain DeletionPolicy = "Retain"
	// DeletionPolicyMerge removes the keys eso wrote and keeps the Secret.
	DeletionPolicyMerge DeletionPolicy = "Merge"
)

// ExternalSecretTarget describes the Secret eso writes.
// +kubebuilder:validation:XValidation:rule="!has(self.deletionPolicy) || self.deletionPolicy != 'Delete' || !has(self.creationPolicy) || self.creationPolicy in ['Owner', 'Orphan']",message="deletionPolicy Delete needs creationPolicy Owner or Orphan: eso only deletes Secrets it wrote whole"
// +kubebuilder:validation:XValidation:rule="!has(self.deletionPolicy) || self.deletionPolicy != 'Merge' || !has(self.creationPolicy) || self.creationPolicy != 'None'",message="deletionPolicy Merge needs a creationPolicy that writes a Secret"
type ExternalSecretTarget struct {
	// Name of the Secret. Defaults to the ExternalSecret's name.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	Name string `json:"name,omitempty"`

	// CreationPolicy says how the Secret is created and owned.
	// +kubebuilder:default=Owner
	// +optional
	CreationPolicy CreationPolicy `json:"creationPolicy,omitempty"`

	// DeletionPolicy says what happens when the remote secrets are gone.
	// +kubebuilder:default=Retain
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// Immutable creates the Secret immutable: Kubernetes then refuses changes
	// to its data, so a changed remote secret is reported, not applied.
	// +optional
	Immutable bool `json:"immutable,omitempty"`

	// Template shapes the Secret: its type, metadata and data rendered from
	// the fetched values.
	// +optional
	Template *ExternalSecretTemplate `json:"template,omitempty"`
}

// ExternalSecretTemplate shapes the target Secret. Templates are Go templates
// over the fetched values (.key), with a fixed set of functions that cannot
// read the environment, the network or the cluster.
// +kubebuilder:validation:XValidation:rule="!has(self.type) || !(self.type in ['kubernetes.io/service-account-token', 'bootstrap.kubernetes.io/token'])",message="template.type may not be a type Kubernetes fills with credentials (service-account-token, bootstrap token)"
type ExternalSecretTemplate struct {
	// Type of the Secret, e.g. kubernetes.io/tls; default Opaque.
	// +optional
	Type corev1.SecretType `json:"type,omitempty"`

	// EngineVersion of the template language; only v2 is served.
	// +kubebuilder:validation:Enum=v2
	// +kubebuilder:default=v2
	// +optional
	EngineVersion TemplateEngineVersion `json:"engineVersion,omitempty"`

	// Metadata adds labels and annotations to the Secret; values are templates.
	// +optional
	Metadata ExternalSecretTemplateMetadata `json:"metadata,omitempty"`

	// MergePolicy Replace writes only the templated keys; Merge writes the
	// fetched keys too, templated keys winning.
	// +kubebuilder:validation:Enum=Replace;Merge
	// +kubebuilder:default=Replace
	// +optional
	MergePolicy TemplateMergePolicy `json:"mergePolicy,omitempty"`

	// Data maps Secret keys to templates.
	// +kubebuilder:validation:MaxProperties=256
	// +optional
	Data map[string]string `json:"data,omitempty"`

	// TemplateFrom reads templates from ConfigMaps or Secrets of the
	// ExternalSecret's namespace, or takes them literally.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	TemplateFrom []TemplateFrom `json:"templateFrom,omitempty"`
}

// TemplateEngineVersion is the template language version.
type TemplateEngineVersion string

// TemplateEngineV2 is the Go-template engine with upstream ESO v2 semantics.
const TemplateEngineV2 TemplateEngineVersion = "v2"

// TemplateMergePolicy says whether fetched keys are kept beside templated ones.
type TemplateMergePolicy string

const (
	MergePolicyReplace TemplateMergePolicy = "Replace"
	MergePolicyMerge   TemplateMergePolicy = "Merge"
)

// ExternalSecretTemplateMetadata are templated labels and annotations.
type ExternalSecretTemplateMetadata struct {
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Finalizers to add to an ExternalSecret's Secret while it is not being
	// deleted, as upstream: each a qualified name (e.g. example.com/keep);
	// eso never removes them. A PushSecret's template has no Secret to add
	// them to.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	// +listType=set
	// +optional
	Finalizers []string `json:"finalizers,omitempty"`
}

// TemplateFrom is one source of templates.
// +kubebuilder:validation:XValidation:rule="[has(self.configMap), has(self.secret), has(self.literal)].filter(x, x).size() == 1",message="each templateFrom entry needs exactly one of configMap, secret or literal"
type TemplateFrom struct {
	// ConfigMap of the ExternalSecret's namespace holding templates.
	// +optional
	ConfigMap *TemplateRef `json:"configMap,omitempty"`
	// Secret of the ExternalSecret's namespace holding templates.
	// +optional
	Secret *TemplateRef `json:"secret,omitempty"`
	// Literal is a template rendering a YAML map of keys to values.
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	Literal *string `json:"literal,omitempty"`
	// Target is where the rendered keys go: Data, Annotations or Labels, in
	// any letter case (as upstream); empty means Data.
	// +kubebuilder:validation:Pattern=`^(|[Dd][Aa][Tt][Aa]|[Aa][Nn][Nn][Oo][Tt][Aa][Tt][Ii][Oo][Nn][Ss]|[Ll][Aa][Bb][Ee][Ll][Ss])$`
	// +kubebuilder:default=Data
	// +optional
	Target TemplateTarget `json:"target,omitempty"`
	// ValuesDecodingStrategy decodes each rendered value (never a key) of
	// this entry: Base64, Base64URL, Auto (Base64 or Base64URL when the
	// value is valid in one of them, else as is) or None. Empty means None.
	// +optional
	ValuesDecodingStrategy DecodingStrategy `json:"valuesDecodingStrategy,omitempty"`
}

// TemplateRef names a ConfigMap or Secret and the keys holding templates.
type TemplateRef struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Items are the keys used; each is rendered as a value (Values) or as a
	// YAML map of keys to values (KeysAndValues).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Items []TemplateRefItem `json:"items"`
}

// TemplateRefItem is one templated key of a ConfigMap or Secret.
type TemplateRefItem struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
	// +kubebuilder:validation:Enum=Values;KeysAndValues
	// +kubebuilder:default=Values
	// +optional
	TemplateAs TemplateScope `json:"templateAs,omitempty"`
}

// TemplateScope says how a templated item is used.
type TemplateScope string

const (
	TemplateScopeValues        TemplateScope = "Values"
	TemplateScopeKeysAndValues TemplateScope = "KeysAndValues"
)

// TemplateTarget is where rendered keys go. Upstream matches it without
// regard to letter case, and so does eso.
type TemplateTarget string

const (
	TemplateTargetData        TemplateTarget = "Data"
	TemplateTargetAnnotations TemplateTarget = "Annotations"
	TemplateTargetLabels      TemplateTarget = "Labels"
)

// ExternalSecretDataRemoteRef points at a secret in the provider.
type ExternalSecretDataRemoteRef struct {
	// Key of the secret in the provider.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	Key string `json:"key"`

	// Property selects one field of a structured (JSON) secret.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Property string `json:"property,omitempty"`

	// Version of the secret; empty means the provider's current version.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Version string `json:"version,omitempty"`

	// MetadataPolicy Fetch reads the secret's metadata (tags, labels) instead
	// of its value, where the provider supports it.
	// +kubebuilder:default=None
	// +optional
	MetadataPolicy MetadataPolicy `json:"metadataPolicy,omitempty"`

	// ConversionStrategy makes the keys dataFrom produces valid Secret keys:
	// Default replaces each character a key cannot hold by "_", Unicode by
	// "_Uxxxx_" (its code point). Not applied when the entry has rewrites.
	// +kubebuilder:default=Default
	// +optional
	ConversionStrategy ConversionStrategy `json:"conversionStrategy,omitempty"`

	// DecodingStrategy decodes values read from the provider: Base64,
	// Base64URL, Auto (Base64 or Base64URL when the value is valid in one of
	// them, else as is) or None.
	// +kubebuilder:default=None
	// +optional
	DecodingStrategy DecodingStrategy `json:"decodingStrategy,omitempty"`

	// NullBytePolicy Fail refuses values containing a NUL byte; Ignore keeps them.
	// +kubebuilder:default=Ignore
	// +optional
	NullBytePolicy NullBytePolicy `json:"nullBytePolicy,omitempty"`
}

// MetadataPolicy says whether the value or the metadata of a secret is read.
// +kubebuilder:validation:Enum=None;Fetch
type MetadataPolicy string

const (
	MetadataPolicyNone  MetadataPolicy = "None"
	MetadataPolicyFetch MetadataPolicy = "Fetch"
)

// ConversionStrategy converts the keys dataFrom produces.
// +kubebuilder:validation:Enum=Default;Unicode
type ConversionStrategy string

const (
	ConversionDefault ConversionStrategy = "Default"
	ConversionUnicode ConversionStrategy = "Unicode"
)

// DecodingStrategy decodes the values read from the provider.
// +kubebuilder:validation:Enum=Auto;Base64;Base64URL;None
type DecodingStrategy string

const (
	DecodingAuto      DecodingStrategy = "Auto"
	DecodingBase64    DecodingStrategy = "Base64"
	DecodingBase64URL DecodingStrategy = "Base64URL"
	DecodingNone      DecodingStrategy = "None"
)

// NullBytePolicy says what to do with values containing NUL bytes.
// +kubebuilder:validation:Enum=Ignore;Fail
type NullBytePolicy string

const (
	NullBytePolicyIgnore NullBytePolicy = "Ignore"
	NullBytePolicyFail   NullBytePolicy = "Fail"
)

// ExternalSecretData maps one remote secret (or property) to one Secret key.
type ExternalSecretData struct {
	// SecretKey is the key in the target Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	SecretKey string `json:"secretKey"`

	// RemoteRef points at the secret in the provider.
	RemoteRef ExternalSecretDataRemoteRef `json:"remoteRef"`

	// SourceRef reads this entry through another store than spec.secretStoreRef.
	// +optional
	SourceRef *StoreSourceRef `json:"sourceRef,omitempty"`
}

// StoreSourceRef names the store one entry reads from.
type StoreSourceRef struct {
	// SecretStoreRef names the store.
	SecretStoreRef SecretStoreRef `json:"storeRef"`
}

// StoreGeneratorSourceRef names the store one dataFrom entry reads from, or
// the generator that produces its keys.
// +kubebuilder:validation:XValidation:rule="has(self.storeRef) != has(self.generatorRef)",message="sourceRef needs exactly one of storeRef or generatorRef"
type StoreGeneratorSourceRef struct {
	// SecretStoreRef names the store.
	// +optional
	SecretStoreRef *SecretStoreRef `json:"storeRef,omitempty"`

	// GeneratorRef names a generator whose output becomes this entry's keys.
	// +optional
	GeneratorRef *GeneratorRef `json:"generatorRef,omitempty"`
}

// GeneratorRef names a generator: a Generator or ClusterGenerator, or a
// generator kind (e.g. Password) of the ExternalSecret's namespace directly.
type GeneratorRef struct {
	// APIVersion of the generator. Absent, it follows from the kind:
	// generator.external-secrets.io/v2alpha1 for Generator and
	// ClusterGenerator, provider.generator.external-secrets.io/v2alpha1 for a
	// generator kind. Upstream's generators.external-secrets.io/v1alpha1 is
	// read as the latter.
	// +kubebuilder:validation:Enum="generator.external-secrets.io/v2alpha1";"provider.generator.external-secrets.io/v2alpha1";"generators.external-secrets.io/v1alpha1"
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the generator, e.g. Generator, ClusterGenerator or Password.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`

	// Name of the generator.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ExternalSecretDataFromRemoteRef pulls many keys at once.
// +kubebuilder:validation:XValidation:rule="[has(self.extract), has(self.find), has(self.sourceRef) && has(self.sourceRef.generatorRef)].filter(x, x).size() == 1",message="each dataFrom entry needs exactly one of extract, find or sourceRef.generatorRef"
type ExternalSecretDataFromRemoteRef struct {
	// Extract reads one structured remote secret and writes each of its
	// top-level fields as a key of the target Secret.
	// +optional
	Extract *ExternalSecretDataRemoteRef `json:"extract,omitempty"`

	// Find reads every remote secret matching a name, path or tags, each as
	// one key of the target Secret named after the remote secret.
	// +optional
	Find *ExternalSecretFind `json:"find,omitempty"`

	// Rewrite renames the keys this entry produces, in order.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Rewrite []ExternalSecretRewrite `json:"rewrite,omitempty"`

	// SourceRef reads this entry through another store than
	// spec.secretStoreRef, or generates it with a generator.
	// +optional
	SourceRef *StoreGeneratorSourceRef `json:"sourceRef,omitempty"`
}

// ExternalSecretFind selects remote secrets by name, path or tags.
// +kubebuilder:validation:XValidation:rule="has(self.name) || has(self.path) || has(self.tags)",message="find needs name, path or tags: eso does not copy a whole provider by accident"
type ExternalSecretFind struct {
	// Path only finds secrets under this prefix.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Path *string `json:"path,omitempty"`

	// Name finds secrets whose name matches.
	// +optional
	Name *FindName `json:"name,omitempty"`

	// Tags finds secrets carrying all these tags (labels, for the Kubernetes provider).
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	Tags map[string]string `json:"tags,omitempty"`

	// ConversionStrategy makes the found names valid Secret keys: Default
	// replaces each character a key cannot hold by "_", Unicode by "_Uxxxx_".
	// Not applied when the entry has rewrites.
	// +kubebuilder:default=Default
	// +optional
	ConversionStrategy ConversionStrategy `json:"conversionStrategy,omitempty"`

	// DecodingStrategy decodes the found values.
	// +kubebuilder:default=None
	// +optional
	DecodingStrategy DecodingStrategy `json:"decodingStrategy,omitempty"`

	// NullBytePolicy Fail refuses the entry when a found value (decoded)
	// contains a NUL byte; Ignore, or absent as upstream, keeps them.
	// +optional
	NullBytePolicy NullBytePolicy `json:"nullBytePolicy,omitempty"`
}

// FindName matches secret names.
type FindName struct {
	// RegExp is an RE2 expression matched anywhere in the name (anchor it with ^ and $).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	RegExp string `json:"regexp"`
}

// ExternalSecretRewrite renames keys, or merges values.
// +kubebuilder:validation:XValidation:rule="[has(self.regexp), has(self.transform), has(self.merge)].filter(x, x).size() == 1",message="each rewrite needs exactly one of regexp, transform or merge"
type ExternalSecretRewrite struct {
	// Merge combines the JSON object values of all keys into one object.
	// +optional
	Merge *ExternalSecretRewriteMerge `json:"merge,omitempty"`
	// Regexp replaces matches of source in each key by target ($1 etc. refer to groups).
	// +optional
	Regexp *ExternalSecretRewriteRegexp `json:"regexp,omitempty"`
	// Transform renders each key through a template; .value is the key.
	// +optional
	Transform *ExternalSecretRewriteTransform `json:"transform,omitempty"`
}

// ExternalSecretRewriteMerge merges the JSON object values of every key.
// +kubebuilder:validation:XValidation:rule="!has(self.strategy) || self.strategy != 'JSON' || (has(self.into) && size(self.into) > 0)",message="merge strategy JSON needs into: the key that receives the merged object"
type ExternalSecretRewriteMerge struct {
	// Into is the key receiving the merged object (strategy JSON).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:default=""
	// +optional
	Into string `json:"into,omitempty"`
	// Priority lists keys whose fields win conflicts, highest first.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Priority []string `json:"priority,omitempty"`
	// PriorityPolicy Strict fails when a priority key is absent; IgnoreNotFound skips it.
	// +kubebuilder:validation:Enum=IgnoreNotFound;Strict
	// +kubebuilder:default=Strict
	// +optional
	PriorityPolicy string `json:"priorityPolicy,omitempty"`
	// ConflictPolicy Error fails when two keys not in priority set one field to
	// different values; Ignore lets the later key (in name order) win.
	// +kubebuilder:validation:Enum=Ignore;Error
	// +kubebuilder:default=Error
	// +optional
	ConflictPolicy string `json:"conflictPolicy,omitempty"`
	// Strategy Extract writes each field of the merged object as a key; JSON
	// writes the merged object under into.
	// +kubebuilder:validation:Enum=Extract;JSON
	// +kubebuilder:default=Extract
	// +optional
	Strategy string `json:"strategy,omitempty"`
}

// ExternalSecretRewriteRegexp replaces by regular expression.
type ExternalSecretRewriteRegexp struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Source string `json:"source"`
	// +kubebuilder:validation:MaxLength=1024
	Target string `json:"target"`
}

// ExternalSecretRewriteTransform renames by template.
type ExternalSecretRewriteTransform struct {
	// Template is a Go template; .value is the key being renamed.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Template string `json:"template"`
}

// SyncWindows restrict periodic refreshes to (allow) or keep them out of
// (deny) recurring windows, in upstream's shape: one kind for a list of
// windows.
type SyncWindows struct {
	// Kind is allow (refreshes run only while a window is open) or deny
	// (refreshes wait while a window is open).
	// +kubebuilder:validation:Enum=allow;deny
	Kind SyncWindowKind `json:"kind"`
	// Windows are the recurring windows.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Windows []SyncWindow `json:"windows"`
}

// SyncWindow is one recurring window.
type SyncWindow struct {
	// Schedule is when the window opens, in UTC: five cron fields or a
	// descriptor such as @daily (not @every, whose windows drift).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^(@(annually|yearly|monthly|weekly|daily|midnight|hourly)|@every [^\s]+.*|[^\s]+( [^\s]+){4})$`
	Schedule string `json:"schedule"`
	// Duration is how long the window stays open.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="duration must be at least 1s"
	Duration metav1.Duration `json:"duration"`
}

// SyncWindowKind says whether a window allows or denies refreshes.
type SyncWindowKind string

const (
	SyncWindowAllow SyncWindowKind = "allow"
	SyncWindowDeny  SyncWindowKind = "deny"
)

// RefreshPolicy says when an ExternalSecret reads its provider again.
// +kubebuilder:validation:Enum=CreatedOnce;Periodic;OnChange
type RefreshPolicy string

const (
	RefreshPolicyCreatedOnce RefreshPolicy = "CreatedOnce"
	RefreshPolicyPeriodic    RefreshPolicy = "Periodic"
	RefreshPolicyOnChange    RefreshPolicy = "OnChange"
)

// ExternalSecretSpec is the desired state of an ExternalSecret.
// +kubebuilder:validation:XValidation:rule="(has(self.data) && size(self.data) > 0) || (has(self.dataFrom) && size(self.dataFrom) > 0)",message="list at least one secret to sync in data or dataFrom"
// +kubebuilder:validation:XValidation:rule="has(self.secretStoreRef) || ((!has(self.data) || self.data.all(d, has(d.sourceRef))) && (!has(self.dataFrom) || self.dataFrom.all(d, has(d.sourceRef))))",message="secretStoreRef is required unless every data and dataFrom entry names its own sourceRef"
type ExternalSecretSpec struct {
	// SecretStoreRef names the store to read from; entries may override it
	// with their own sourceRef.
	// +optional
	SecretStoreRef *SecretStoreRef `json:"secretStoreRef,omitempty"`

	// Target describes the Secret eso writes.
	// +kubebuilder:default={creationPolicy: Owner, deletionPolicy: Retain}
	// +optional
	Target ExternalSecretTarget `json:"target,omitempty"`

	// RefreshInterval is how often the provider is read again. "0s" syncs once
	// and then only when the ExternalSecret changes.
	// +kubebuilder:default="1h"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) == duration('0s') || duration(self) >= duration('1s')",message="refreshInterval must be 0s or at least 1s"
	RefreshInterval *metav1.Duration `json:"refreshInterval,omitempty"`

	// RefreshPolicy says when the provider is read again: Periodic (every
	// refreshInterval), OnChange (only when the ExternalSecret changes) or
	// CreatedOnce (only to create the Secret; an existing Secret is never
	// updated). Absent means Periodic.
	// +optional
	RefreshPolicy RefreshPolicy `json:"refreshPolicy,omitempty"`

	// SyncWindows restrict when periodic refreshes may run, e.g. only at
	// night, or never during a release freeze. A new or edited ExternalSecret,
	// or a missing Secret, is synced at once regardless.
	// +optional
	SyncWindows *SyncWindows `json:"syncWindows,omitempty"`

	// Data maps remote secrets to keys of the target Secret.
	// +kubebuilder:validation:MaxItems=1024
	// +listType=atomic
	// +optional
	Data []ExternalSecretData `json:"data,omitempty"`

	// DataFrom pulls many keys at once; later entries win over earlier ones and
	// data wins over dataFrom.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	DataFrom []ExternalSecretDataFromRemoteRef `json:"dataFrom,omitempty"`

	// RolloutRestartTargets are workloads of this namespace that eso
	// restarts, as `kubectl rollout restart` does, each time it changes the
	// target Secret's data (not when it creates it, nor on a refresh that
	// changes nothing). Served only when eso runs with --rollout-restarts.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	RolloutRestartTargets []RolloutRestartTarget `json:"rolloutRestartTargets,omitempty"`
}

// RolloutRestartTarget names a workload in the ExternalSecret's namespace.
type RolloutRestartTarget struct {
	// Kind is Deployment, StatefulSet or DaemonSet (group apps).
	// +kubebuilder:validation:Enum=Deployment;StatefulSet;DaemonSet
	Kind string `json:"kind"`
	// Name is the workload's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`
}

// ExternalSecretStatus is the observed state of an ExternalSecret.
type ExternalSecretStatus struct {
	// RefreshTime is when eso last wrote the target Secret. A refresh that finds
	// nothing changed leaves it alone, so an idle ExternalSecret costs no writes.
	// +nullable
	// +optional
	RefreshTime metav1.Time `json:"refreshTime,omitempty"`

	// SyncedResourceVersion is the ExternalSecret generation last synced.
	// +optional
	SyncedResourceVersion string `json:"syncedResourceVersion,omitempty"`

	// Binding names the target Secret.
	// +optional
	Binding SecretBinding `json:"binding,omitempty"`

	// Conditions: Ready says whether the target Secret holds the provider's data;
	// Synced gives eso's finer reason; Stalled, present only while True, says the
	// failure can end only with an edit of this ExternalSecret's spec.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ObservedGeneration is the generation of the ExternalSecret this status
	// describes. While it is older than metadata.generation eso has not
	// looked at the latest edit yet, and kstatus (Flux, kpt) reads the
	// ExternalSecret as InProgress, whatever the conditions of the older
	// generation say (a Stalled=True the edit may have fixed).
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// SecretBinding names the target Secret.
type SecretBinding struct {
	// +optional
	Name string `json:"name,omitempty"`
}

// Conditions of an ExternalSecret. Ready speaks upstream's vocabulary, so
// alerts, scripts and health checks written for upstream read it unchanged:
// its reason is SecretSynced, SecretDeleted or SecretMissing (True), or
// SecretSyncedError (False). Synced says the same with eso's finer reason
// (StoreNotAllowed, RemoteSecretNotFound, TemplateError, ...). Stalled is
// present, True, only while the failure is one that retrying cannot end and
// only an edit of the ExternalSecret's spec can (a template that does not
// parse, an apiVersion eso does not serve), with Synced's reason and
// message; kstatus (Flux, kpt) reads it as Failed. It is removed once the
// ExternalSecret syncs or fails in a way that can pass by itself.
const (
	ConditionReady   = "Ready"
	ConditionSynced  = "Synced"
	ConditionStalled = "Stalled"
)

// Reasons of the Ready and Synced conditions.
const (
	ReasonSecretSynced      = "SecretSynced"
	ReasonSecretSyncedError = "SecretSyncedError"
	ReasonSecretDeleted     = "SecretDeleted"
	// ReasonSecretMissing: creationPolicy Merge and the target does not
	// exist; nothing to merge into, which is not an error.
	ReasonSecretMissing    = "SecretMissing"
	ReasonStoreNotFound    = "StoreNotFound"
	ReasonStoreNotReady    = "StoreNotReady"
	ReasonStoreNotAllowed  = "StoreNotAllowed"
	ReasonProviderError    = "ProviderError"
	ReasonSecretNotFound   = "RemoteSecretNotFound"
	ReasonTargetConflict   = "TargetConflict"
	ReasonTargetImmutable  = "TargetImmutable"
	ReasonTemplateError    = "TemplateError"
	ReasonUnsupportedStore = "UnsupportedStore"
	// ReasonInvalidSpec: the object holds a value eso cannot decode (stored
	// before the schema refused it); eso does nothing else with it.
	ReasonInvalidSpec = "InvalidSpec"
)

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=es,categories={external-secrets}
// +kubebuilder:printcolumn:name="StoreType",type=string,JSONPath=`.spec.secretStoreRef.kind`
// +kubebuilder:printcolumn:name="Store",type=string,JSONPath=`.spec.secretStoreRef.name`
// +kubebuilder:printcolumn:name="Refresh Interval",type=string,JSONPath=`.spec.refreshInterval`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Cause",type=string,JSONPath=`.status.conditions[?(@.type=="Synced")].reason`,priority=1
// +kubebuilder:printcolumn:name="Last Sync",type=date,JSONPath=`.status.refreshTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ExternalSecret syncs secrets from a provider into a Kubernetes Secret.
type ExternalSecret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ExternalSecretSpec   `json:"spec,omitempty"`
	Status ExternalSecretStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ExternalSecretList is a list of ExternalSecrets.
type ExternalSecretList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExternalSecret `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ExternalSecret{}, &ExternalSecretList{})
}

// Merges reports whether the ExternalSecret adds its keys to a Secret others
// may write too, rather than writing the Secret whole.
func (t ExternalSecretTarget) Merges() bool {
	return t.CreationPolicy == CreatePolicyMerge || t.CreationPolicy == CreatePolicyCreateOrMerge
}

// TargetName is the name of the Secret this ExternalSecret writes.
func (es *ExternalSecret) TargetName() string {
	if es.Spec.Target.Name != "" {
		return es.Spec.Target.Name
	}
	return es.Name
}

// Metadata eso puts on the Secrets it manages. The names match upstream ESO so
// Secrets keep their meaning across the two.
const (
	// LabelManaged marks a Secret written by eso; eso's Secret cache only holds
	// Secrets with this label, never every Secret in the cluster.
	LabelManaged = "reconcile.external-secrets.io/managed"
	// LabelManagedValue is the value of LabelManaged.
	LabelManagedValue = "true"
	// AnnotationDataHash is a hash of the data eso wrote, to spot drift without
	// comparing values.
	AnnotationDataHash = "reconcile.external-secrets.io/data-hash"
	// AnnotationForceSync, changed, makes an ExternalSecret read its provider
	// again (any annotation change does); on a ClusterExternalSecret it is
	// copied to every ExternalSecret it stamps, and removed with it.
	AnnotationForceSync = "external-secrets.io/force-sync"
	// AnnotationMergedKeysPrefix, followed by a digest of the ExternalSecret's
	// name, records the keys a merging ExternalSecret (Merge, CreateOrMerge)
	// wrote into a shared Secret, so it can remove exactly those later.
	AnnotationMergedKeysPrefix = "reconcile.external-secrets.io/keys-"
	// AnnotationManagedBy names the ExternalSecret that writes a Secret whole
	// (creationPolicy Owner or Orphan), so no other ExternalSecret writes it too.
	AnnotationManagedBy = "reconcile.external-secrets.io/managed-by"
)
