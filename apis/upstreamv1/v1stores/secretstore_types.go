package v1stores

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1"
)

// SecretStoreSpec is the spec of both SecretStore and ClusterSecretStore, as
// in upstream's external-secrets.io/v1.
type SecretStoreSpec struct {
	// Controller is the controller class: only an eso started with the same
	// class acts on this store.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Controller string `json:"controller,omitempty"`

	// Provider holds the configuration of exactly one provider.
	Provider *SecretStoreProvider `json:"provider"`

	// RetrySettings bound how failing provider calls are retried.
	// +optional
	RetrySettings *SecretStoreRetrySettings `json:"retrySettings,omitempty"`

	// RefreshInterval is how often the store is revalidated: a number of
	// seconds or a Go duration such as "5m". Absent or 0 means the
	// controller's default.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:XValidation:rule="type(self) != int || self >= 0",message="refreshInterval must not be negative"
	// +optional
	RefreshInterval *intstr.IntOrString `json:"refreshInterval,omitempty"`

	// Conditions restrict which namespaces may use a ClusterSecretStore; a
	// namespace may when any condition matches it. A SecretStore ignores them.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []ClusterSecretStoreCondition `json:"conditions,omitempty"`
}

// SecretStoreRetrySettings bound how failing provider calls are retried.
type SecretStoreRetrySettings struct {
	// MaxRetries is how many times a call is retried.
	// +optional
	MaxRetries *int32 `json:"maxRetries,omitempty"`

	// RetryInterval is the pause between retries, a Go duration such as "10s".
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +optional
	RetryInterval *string `json:"retryInterval,omitempty"`
}

// ClusterSecretStoreCondition matches namespaces by label selector, by name
// or by regular expression.
type ClusterSecretStoreCondition struct {
	// NamespaceSelector matches namespaces by their labels.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// Namespaces lists namespaces by name.
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`

	// NamespaceRegexes are regular expressions matched against namespace names.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=1024
	// +optional
	NamespaceRegexes []string `json:"namespaceRegexes,omitempty"`
}

// SecretStoreProvider holds one provider's configuration. eso serves aws,
// gcpsm, vault, kubernetes and fake as upstream defines them, and its own
// plugin. Upstream's other providers are declared only so that a store naming
// one is refused with a message saying so, rather than the field being
// pruned without a word.
// +kubebuilder:validation:XValidation:rule="[has(self.aws), has(self.gcpsm), has(self.vault), has(self.kubernetes), has(self.fake), has(self.plugin), has(self.azurekv), has(self.akeyless), has(self.alibaba), has(self.barbican), has(self.beyondtrust), has(self.beyondtrustworkloadcredentials), has(self.bitwardensecretsmanager), has(self.chef), has(self.cloudrusm), has(self.conjur), has(self.crd), has(self.delinea), has(self.device42), has(self.doppler), has(self.dvls), has(self.fortanix), has(self.github), has(self.gitlab), has(self.ibm), has(self.infisical), has(self.keepersecurity), has(self.nebiusmysterybox), has(self.ngrok), has(self.onboardbase), has(self.onepassword), has(self.onepasswordSDK), has(self.openBao), has(self.oracle), has(self.ovh), has(self.passbolt), has(self.passworddepot), has(self.previder), has(self.pulumi), has(self.scaleway), has(self.secretserver), has(self.senhasegura), has(self.volcengine), has(self.webhook), has(self.yandexcertificatemanager), has(self.yandexlockbox)].exists_one(x, x)",message="provider needs exactly one provider; eso serves the aws, gcpsm, vault, kubernetes, fake and plugin providers of external-secrets.io/v1 stores"
// +kubebuilder:validation:XValidation:rule="!(has(self.azurekv) || has(self.akeyless) || has(self.alibaba) || has(self.barbican) || has(self.beyondtrust) || has(self.beyondtrustworkloadcredentials) || has(self.bitwardensecretsmanager) || has(self.chef) || has(self.cloudrusm) || has(self.conjur) || has(self.crd) || has(self.delinea) || has(self.device42) || has(self.doppler) || has(self.dvls) || has(self.fortanix) || has(self.github) || has(self.gitlab) || has(self.ibm) || has(self.infisical) || has(self.keepersecurity) || has(self.nebiusmysterybox) || has(self.ngrok) || has(self.onboardbase) || has(self.onepassword) || has(self.onepasswordSDK) || has(self.openBao) || has(self.oracle) || has(self.ovh) || has(self.passbolt) || has(self.passworddepot) || has(self.previder) || has(self.pulumi) || has(self.scaleway) || has(self.secretserver) || has(self.senhasegura) || has(self.volcengine) || has(self.webhook) || has(self.yandexcertificatemanager) || has(self.yandexlockbox))",message="eso serves the aws, gcpsm, vault, kubernetes, fake and plugin providers of external-secrets.io/v1 stores; the store names another provider",messageExpression="'eso serves the aws, gcpsm, vault, kubernetes, fake and plugin providers of external-secrets.io/v1 stores; ' + (has(self.azurekv) ? 'azurekv' : has(self.akeyless) ? 'akeyless' : has(self.alibaba) ? 'alibaba' : has(self.barbican) ? 'barbican' : has(self.beyondtrust) ? 'beyondtrust' : has(self.beyondtrustworkloadcredentials) ? 'beyondtrustworkloadcredentials' : has(self.bitwardensecretsmanager) ? 'bitwardensecretsmanager' : has(self.chef) ? 'chef' : has(self.cloudrusm) ? 'cloudrusm' : has(self.conjur) ? 'conjur' : has(self.crd) ? 'crd' : has(self.delinea) ? 'delinea' : has(self.device42) ? 'device42' : has(self.doppler) ? 'doppler' : has(self.dvls) ? 'dvls' : has(self.fortanix) ? 'fortanix' : has(self.github) ? 'github' : has(self.gitlab) ? 'gitlab' : has(self.ibm) ? 'ibm' : has(self.infisical) ? 'infisical' : has(self.keepersecurity) ? 'keepersecurity' : has(self.nebiusmysterybox) ? 'nebiusmysterybox' : has(self.ngrok) ? 'ngrok' : has(self.onboardbase) ? 'onboardbase' : has(self.onepassword) ? 'onepassword' : has(self.onepasswordSDK) ? 'onepasswordSDK' : has(self.openBao) ? 'openBao' : has(self.oracle) ? 'oracle' : has(self.ovh) ? 'ovh' : has(self.passbolt) ? 'passbolt' : has(self.passworddepot) ? 'passworddepot' : has(self.previder) ? 'previder' : has(self.pulumi) ? 'pulumi' : has(self.scaleway) ? 'scaleway' : has(self.secretserver) ? 'secretserver' : has(self.senhasegura) ? 'senhasegura' : has(self.volcengine) ? 'volcengine' : has(self.webhook) ? 'webhook' : has(self.yandexcertificatemanager) ? 'yandexcertificatemanager' : has(self.yandexlockbox) ? 'yandexlockbox' : 'another provider') + ' is not one of them'"
type SecretStoreProvider struct {
	// AWS configures AWS Secrets Manager, Parameter Store or Certificate Manager.
	// +optional
	AWS *AWSProvider `json:"aws,omitempty"`

	// GCPSM configures Google Cloud Secret Manager.
	// +optional
	GCPSM *GCPSMProvider `json:"gcpsm,omitempty"`

	// Vault configures a HashiCorp Vault KV engine.
	// +optional
	Vault *upstreamv1.VaultProvider `json:"vault,omitempty"`

	// Kubernetes configures the Secrets of a Kubernetes cluster.
	// +optional
	Kubernetes *KubernetesProvider `json:"kubernetes,omitempty"`

	// Fake configures fixed data.
	// +optional
	Fake *FakeProvider `json:"fake,omitempty"`

	// Plugin forwards every request to an eso provider service.
	// +optional
	Plugin *PluginProvider `json:"plugin,omitempty"`

	// Upstream providers eso does not serve, each an object that is kept
	// (not pruned) so the rule above can refuse it.

	AzureKV                        *UnsupportedProvider `json:"azurekv,omitempty"`
	Akeyless                       *UnsupportedProvider `json:"akeyless,omitempty"`
	Alibaba                        *UnsupportedProvider `json:"alibaba,omitempty"`
	Barbican                       *UnsupportedProvider `json:"barbican,omitempty"`
	Beyondtrust                    *UnsupportedProvider `json:"beyondtrust,omitempty"`
	BeyondtrustWorkloadCredentials *UnsupportedProvider `json:"beyondtrustworkloadcredentials,omitempty"`
	BitwardenSecretsManager        *UnsupportedProvider `json:"bitwardensecretsmanager,omitempty"`
	Chef                           *UnsupportedProvider `json:"chef,omitempty"`
	CloudruSM                      *UnsupportedProvider `json:"cloudrusm,omitempty"`
	Conjur                         *UnsupportedProvider `json:"conjur,omitempty"`
	CRD                            *UnsupportedProvider `json:"crd,omitempty"`
	Delinea                        *UnsupportedProvider `json:"delinea,omitempty"`
	Device42                       *UnsupportedProvider `json:"device42,omitempty"`
	Doppler                        *UnsupportedProvider `json:"doppler,omitempty"`
	DVLS                           *UnsupportedProvider `json:"dvls,omitempty"`
	Fortanix                       *UnsupportedProvider `json:"fortanix,omitempty"`
	Github                         *UnsupportedProvider `json:"github,omitempty"`
	Gitlab                         *UnsupportedProvider `json:"gitlab,omitempty"`
	IBM                            *UnsupportedProvider `json:"ibm,omitempty"`
	Infisical                      *UnsupportedProvider `json:"infisical,omitempty"`
	KeeperSecurity                 *UnsupportedProvider `json:"keepersecurity,omitempty"`
	NebiusMysterybox               *UnsupportedProvider `json:"nebiusmysterybox,omitempty"`
	Ngrok                          *UnsupportedProvider `json:"ngrok,omitempty"`
	Onboardbase                    *UnsupportedProvider `json:"onboardbase,omitempty"`
	OnePassword                    *UnsupportedProvider `json:"onepassword,omitempty"`
	OnePasswordSDK                 *UnsupportedProvider `json:"onepasswordSDK,omitempty"`
	OpenBao                        *UnsupportedProvider `json:"openBao,omitempty"`
	Oracle                         *UnsupportedProvider `json:"oracle,omitempty"`
	OVHcloud                       *UnsupportedProvider `json:"ovh,omitempty"`
	Passbolt                       *UnsupportedProvider `json:"passbolt,omitempty"`
	PasswordDepot                  *UnsupportedProvider `json:"passworddepot,omitempty"`
	Previder                       *UnsupportedProvider `json:"previder,omitempty"`
	Pulumi                         *UnsupportedProvider `json:"pulumi,omitempty"`
	Scaleway                       *UnsupportedProvider `json:"scaleway,omitempty"`
	SecretServer                   *UnsupportedProvider `json:"secretserver,omitempty"`
	Senhasegura                    *UnsupportedProvider `json:"senhasegura,omitempty"`
	Volcengine                     *UnsupportedProvider `json:"volcengine,omitempty"`
	Webhook                        *UnsupportedProvider `json:"webhook,omitempty"`
	YandexCertificateManager       *UnsupportedProvider `json:"yandexcertificatemanager,omitempty"`
	YandexLockbox                  *UnsupportedProvider `json:"yandexlockbox,omitempty"`
}

// UnsupportedProvider is the configuration of an upstream provider eso does
// not serve, kept as written (never pruned) so that admission can refuse it
// by name. eso never reads it.
//
// +kubebuilder:validation:Type=object
// +kubebuilder:pruning:PreserveUnknownFields
type UnsupportedProvider struct {
	// Raw is the JSON as written.
	Raw []byte `json:"-"`
}

// MarshalJSON writes the JSON as it was read.
func (u UnsupportedProvider) MarshalJSON() ([]byte, error) {
	if len(u.Raw) == 0 {
		return []byte("{}"), nil
	}
	return u.Raw, nil
}

// UnmarshalJSON keeps the JSON as it is.
func (u *UnsupportedProvider) UnmarshalJSON(data []byte) error {
	u.Raw = append(u.Raw[:0], data...)
	return nil
}

// SecretStoreCapabilities says which operations a store supports.
// +kubebuilder:validation:Enum=ReadOnly;WriteOnly;ReadWrite
type SecretStoreCapabilities string

// Store capabilities.
const (
	SecretStoreReadOnly  SecretStoreCapabilities = "ReadOnly"
	SecretStoreWriteOnly SecretStoreCapabilities = "WriteOnly"
	SecretStoreReadWrite SecretStoreCapabilities = "ReadWrite"
)

// ConditionReady is the store condition that says whether it is usable.
const ConditionReady = "Ready"

// SecretStoreStatus is the observed state of a store: conditions,
// observedGeneration and capabilities, as eso writes them for every store.
type SecretStoreStatus struct {
	v2alpha1.SecretStoreStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-stores},shortName=ss
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Capabilities",type=string,JSONPath=`.status.capabilities`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`

// SecretStore is upstream's external-secrets.io/v1 SecretStore: a provider
// configuration the ExternalSecrets of its namespace can use.
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

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories={external-secrets,external-secrets-stores},shortName=css
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Capabilities",type=string,JSONPath=`.status.capabilities`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`

// ClusterSecretStore is upstream's external-secrets.io/v1 ClusterSecretStore:
// a provider configuration usable from the namespaces its conditions allow.
type ClusterSecretStore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   SecretStoreSpec   `json:"spec"`
	Status SecretStoreStatus `json:"status,omitempty"`
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
