package v2alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GatingPolicy says whether ExternalSecrets wait for their store to be healthy.
// +kubebuilder:validation:Enum=Enabled;Disabled
type GatingPolicy string

const (
	// GatingEnabled: secrets are synced only while the store is Ready (or not yet checked).
	GatingEnabled GatingPolicy = "Enabled"
	// GatingDisabled: secrets are synced whatever the store's condition.
	GatingDisabled GatingPolicy = "Disabled"
)

// CachingPolicy says what eso may cache for a store.
// +kubebuilder:validation:Enum=ProviderDefined;Secrets;Auth;All;None
type CachingPolicy string

const (
	CachingProviderDefined CachingPolicy = "ProviderDefined"
	CachingSecrets         CachingPolicy = "Secrets"
	CachingAuth            CachingPolicy = "Auth"
	CachingAll             CachingPolicy = "All"
	CachingNone            CachingPolicy = "None"
)

// AuthenticationScope says in which namespace a ClusterSecretStore's provider
// resolves the credentials its configuration references.
// +kubebuilder:validation:Enum=ProviderNamespace;ManifestNamespace
type AuthenticationScope string

const (
	// ProviderNamespace resolves credentials in the namespace of the provider configuration.
	ProviderNamespace AuthenticationScope = "ProviderNamespace"
	// ManifestNamespace resolves credentials in the namespace of the ExternalSecret
	// (or PushSecret) that uses the store: each tenant authenticates as itself.
	ManifestNamespace AuthenticationScope = "ManifestNamespace"
)

// SecretStoreSpec is shared by SecretStore and ClusterSecretStore.
// +kubebuilder:validation:XValidation:rule="!has(self.cacheConfig) || self.cachingPolicy in ['Secrets', 'Auth', 'All']",message="cacheConfig is only used with cachingPolicy Secrets, Auth or All"
type SecretStoreSpec struct {
	// RefreshInterval is how often eso revalidates the provider configuration.
	// "0s" revalidates only when the store or its provider configuration changes.
	// +kubebuilder:default="5m"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) == duration('0s') || duration(self) >= duration('1s')",message="refreshInterval must be 0s or at least 1s"
	RefreshInterval *metav1.Duration `json:"refreshInterval,omitempty"`

	// Controller is the controller class: only an eso started with the same
	// --controller-class acts on this store and the secrets that use it.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Controller string `json:"controller,omitempty"`

	// RetrySettings bound how often a failing provider call is retried.
	// +optional
	RetrySettings *RetrySettings `json:"retrySettings,omitempty"`

	// GatingPolicy Enabled keeps ExternalSecrets of this store from syncing while
	// the store is not Ready, so a broken configuration does not flood the provider.
	// +kubebuilder:default=Enabled
	// +optional
	GatingPolicy GatingPolicy `json:"gatingPolicy,omitempty"`

	// CachingPolicy says what eso may cache for this store.
	// +kubebuilder:default=ProviderDefined
	// +optional
	CachingPolicy CachingPolicy `json:"cachingPolicy,omitempty"`

	// CacheConfig bounds the cache when cachingPolicy is Secrets, Auth or All.
	// +optional
	CacheConfig *CacheConfig `json:"cacheConfig,omitempty"`

	// PushPolicy is what PushSecrets may do through this store. A
	// ClusterSecretStore is shared by every namespace it admits: it says
	// which remote keys each may write and whether any may adopt or delete.
	// +optional
	PushPolicy *PushPolicy `json:"pushPolicy,omitempty"`

	// ProviderConfig says which provider serves this store and where it runs.
	ProviderConfig ProviderConfig `json:"providerConfig"`
}

// RetrySettings bound retries of failing provider calls.
type RetrySettings struct {
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	MaxRetries *int32 `json:"maxRetries,omitempty"`
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="retryInterval must be at least 1s"
	RetryInterval *metav1.Duration `json:"retryInterval,omitempty"`
}

// Permission allows or refuses something a PushSecret asks for.
// +kubebuilder:validation:Enum=Allowed;Refused
type Permission string

const (
	Allowed Permission = "Allowed"
	Refused Permission = "Refused"
)

// PushPolicy is what PushSecrets may do through a store.
type PushPolicy struct {
	// Adoption says whether a PushSecret with adoptionPolicy Adopt may take
	// over a remote secret eso did not create. Default: Allowed for a
	// SecretStore, Refused for a ClusterSecretStore.
	// +optional
	Adoption Permission `json:"adoption,omitempty"`

	// Deletion says whether a PushSecret with deletionPolicy Delete may
	// delete what it pushed. Default: Allowed.
	// +optional
	Deletion Permission `json:"deletion,omitempty"`

	// RemoteKeyPrefix, when set, is how every remote key pushed through the
	// store must start; "{namespace}" in it stands for the namespace of the
	// PushSecret, e.g. "teams/{namespace}/" confines each namespace to keys
	// of its own. "{namespace}" must be followed by a character no
	// namespace name holds (not a letter, digit or "-"): with
	// "{namespace}-", namespace "team"'s keys would take in team-b's.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.matches('[{]namespace[}]([a-z0-9-]|$)')",message="in remoteKeyPrefix, {namespace} must be followed by a separator no namespace name holds (e.g. {namespace}/), or one namespace's keys would start with another's name"
	// +optional
	RemoteKeyPrefix string `json:"remoteKeyPrefix,omitempty"`
}

// CacheConfig bounds a store's cache.
type CacheConfig struct {
	// TTL is how long a cached entry is used.
	// +kubebuilder:default="1m"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="ttl must be at least 1s"
	TTL metav1.Duration `json:"ttl,omitempty"`
	// MaxEntries caps the number of cached entries (per store, and per
	// namespace for a ClusterSecretStore with ManifestNamespace).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +kubebuilder:default=100
	// +optional
	MaxEntries int32 `json:"maxEntries,omitempty"`
}

// ProviderConfig says which provider serves a store and where it runs.
type ProviderConfig struct {
	// Address of an out-of-process provider (eso --mode=provider), e.g.
	// "eso-provider-aws.eso-system.svc:8443". Empty means the provider runs
	// in process, inside eso itself.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Address string `json:"address,omitempty"`

	// Auth is how eso authenticates to an out-of-process provider.
	// +optional
	Auth *ProviderAuth `json:"auth,omitempty"`

	// ProviderRef names the provider-owned configuration object
	// (group provider.secretstore.external-secrets.io).
	ProviderRef ProviderRef `json:"providerRef"`
}

// ProviderAuth is how eso authenticates to an out-of-process provider.
type ProviderAuth struct {
	// ClientCertificate is a Secret of type kubernetes.io/tls holding the client
	// certificate and key eso presents to the provider.
	// +optional
	ClientCertificate *SecretRef `json:"clientCertificate,omitempty"`
	// ServiceAccountRef is a ServiceAccount whose token eso presents to the provider.
	// +optional
	ServiceAccountRef *ServiceAccountRef `json:"serviceAccountRef,omitempty"`
}

// SecretRef names a Secret.
type SecretRef struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace is only honoured for cluster-scoped stores.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ServiceAccountRef names a ServiceAccount.
type ServiceAccountRef struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace is only honoured for cluster-scoped stores.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Audiences requested for the token.
	// +optional
	Audiences []string `json:"audiences,omitempty"`
}

// ProviderRef names a provider-owned configuration object.
type ProviderRef struct {
	// Kind of the provider configuration, e.g. Fake, Kubernetes, AWSSecretManager.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace of the provider configuration. A SecretStore may only name its
	// own namespace (or leave this empty); a ClusterSecretStore must set it.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// SecretStoreStatus is the observed state of a store.
type SecretStoreStatus struct {
	// Conditions: Ready says whether the provider configuration is usable.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the store generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Capabilities says whether the store reads, writes or both, as its
	// provider client reports them once it has logged in.
	// +kubebuilder:validation:Enum=ReadOnly;WriteOnly;ReadWrite
	// +optional
	Capabilities string `json:"capabilities,omitempty"`
}

// ConditionReady is the store condition that gates ExternalSecrets.
const ConditionReady = "Ready"

// Reasons of the Ready condition.
const (
	ReasonValid                    = "Valid"
	ReasonInvalidProviderConfig    = "InvalidProviderConfig"
	ReasonProviderNotCompiledIn    = "ProviderNotCompiledIn"
	ReasonProviderRefNotFound      = "ProviderRefNotFound"
	ReasonCrossNamespaceRefused    = "CrossNamespaceRefused"
	ReasonRemoteProviderNotEnabled = "RemoteProviderNotEnabled"
	ReasonInvalidConditions        = "InvalidConditions"
	ReasonValidationFailed         = "ValidationFailed"
	// ReasonInvalidSpec: the store holds a value eso cannot decode (stored
	// before the schema refused it).
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonAuthenticationFailed: the provider refused the store's credentials.
	ReasonAuthenticationFailed = "AuthenticationFailed"
	// ReasonIncompatibleProvider: the provider process at
	// providerConfig.address does not speak core's protocol version, or
	// does not serve the configuration's kind.
	ReasonIncompatibleProvider = "IncompatibleProvider"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=ssv2,categories={external-secrets,external-secrets-stores}
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.providerConfig.providerRef.kind`
// +kubebuilder:printcolumn:name="Config",type=string,JSONPath=`.spec.providerConfig.providerRef.name`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// SecretStore makes a provider configuration of its own namespace usable by the
// ExternalSecrets of that namespace. It never reads another namespace.
type SecretStore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   SecretStoreSpec   `json:"spec"`
	Status SecretStoreStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SecretStoreList is a list of SecretStores.
type SecretStoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SecretStore `json:"items"`
}

// ClusterSecretStoreSpec adds who may use the store and whose credentials it uses.
// +kubebuilder:validation:XValidation:rule="has(self.providerConfig.providerRef.namespace) && size(self.providerConfig.providerRef.namespace) > 0",message="providerConfig.providerRef.namespace is required: a ClusterSecretStore points at a provider configuration in a namespace"
// +kubebuilder:validation:XValidation:rule="!has(self.credentialsNamespace) || !has(self.authenticationScope) || self.authenticationScope == 'ProviderNamespace'",message="credentialsNamespace is only used with authenticationScope ProviderNamespace"
type ClusterSecretStoreSpec struct {
	SecretStoreSpec `json:",inline"`

	// AuthenticationScope says where the provider resolves the credentials its
	// configuration references: in the provider configuration's namespace, or in
	// the namespace of the ExternalSecret using the store.
	// +kubebuilder:default=ProviderNamespace
	// +optional
	AuthenticationScope AuthenticationScope `json:"authenticationScope,omitempty"`

	// CredentialsNamespace, with authenticationScope ProviderNamespace, is the
	// namespace the provider resolves the configuration's credentials in when
	// it is not the configuration's own: the configuration can then stay in a
	// namespace only admins write while the credentials are kept elsewhere.
	// Empty means the configuration's namespace.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	CredentialsNamespace string `json:"credentialsNamespace,omitempty"`

	// Conditions restrict which namespaces may use the store. A namespace may use
	// it when any condition matches; no conditions means every namespace.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []ClusterSecretStoreCondition `json:"conditions,omitempty"`
}

// ClusterSecretStoreCondition matches namespaces. Within one condition the
// namespace matches if it matches the selector, is listed, or matches a regex.
// +kubebuilder:validation:XValidation:rule="has(self.namespaceSelector) || (has(self.namespaces) && size(self.namespaces) > 0) || (has(self.namespaceRegexes) && size(self.namespaceRegexes) > 0)",message="a condition needs namespaceSelector, namespaces or namespaceRegexes"
type ClusterSecretStoreCondition struct {
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
	// NamespaceRegexes are RE2 expressions matched against the whole namespace name.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	NamespaceRegexes []string `json:"namespaceRegexes,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cssv2,categories={external-secrets,external-secrets-stores}
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.providerConfig.providerRef.kind`
// +kubebuilder:printcolumn:name="Config",type=string,JSONPath=`.spec.providerConfig.providerRef.name`
// +kubebuilder:printcolumn:name="Namespace",type=string,JSONPath=`.spec.providerConfig.providerRef.namespace`
// +kubebuilder:printcolumn:name="Scope",type=string,JSONPath=`.spec.authenticationScope`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterSecretStore makes a namespaced provider configuration usable from the
// namespaces its conditions allow.
type ClusterSecretStore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterSecretStoreSpec `json:"spec"`
	Status SecretStoreStatus      `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterSecretStoreList is a list of ClusterSecretStores.
type ClusterSecretStoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterSecretStore `json:"items"`
}

func init() {
	SchemeBuilder.Register(&SecretStore{}, &SecretStoreList{}, &ClusterSecretStore{}, &ClusterSecretStoreList{})
}
