package v2alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1"
)

// VaultDynamicSecretResultType selects which part of Vault's response
// becomes the generated values.
// +kubebuilder:validation:Enum=Data;Auth;Raw
type VaultDynamicSecretResultType string

const (
	// VaultResultData: the response's data fields (e.g. username, password).
	VaultResultData VaultDynamicSecretResultType = "Data"
	// VaultResultAuth: the response's auth block (client_token, accessor,
	// policies, ...), for paths that issue tokens.
	VaultResultAuth VaultDynamicSecretResultType = "Auth"
	// VaultResultRaw: the whole response (request_id, lease_id, data, ...).
	VaultResultRaw VaultDynamicSecretResultType = "Raw"
)

// VaultDynamicSecretSpec asks Vault for a dynamic secret (database or
// cloud credentials, a certificate, a token) with one API request. Server,
// TLS and auth are those of the Vault provider, written either at spec
// level (eso's shape) or under provider (upstream's shape, the block of a
// v1 SecretStore's spec.provider.vault).
//
// Leases and child tokens belong to the token that created them: Vault
// revokes them when that token expires. With a login (appRole, kubernetes,
// jwt, cert) the login token's TTL therefore bounds how long the generated
// values live; give the role a TTL to match, or use a periodic token.
// +kubebuilder:validation:XValidation:rule="!has(self.provider) || !(has(self.server) || has(self.auth) || has(self.namespace) || has(self.caBundle) || has(self.caProvider))",message="set the connection either under provider (upstream's shape) or at spec level (server, namespace, caBundle, caProvider, auth), not both"
// +kubebuilder:validation:XValidation:rule="has(self.provider) || (has(self.server) && has(self.auth))",message="server and auth are required when provider is not set"
// +kubebuilder:validation:XValidation:rule="!has(self.auth) || [has(self.auth.tokenSecretRef), has(self.auth.appRole), has(self.auth.kubernetes), has(self.auth.jwt), has(self.auth.cert)].filter(x, x).size() == 1",message="auth needs exactly one of tokenSecretRef, appRole, kubernetes, jwt or cert"
// +kubebuilder:validation:XValidation:rule="!(has(self.caBundle) && has(self.caProvider))",message="set caBundle or caProvider, not both"
// +kubebuilder:validation:XValidation:rule="!has(self.auth) || !has(self.auth.cert) || (has(self.server) && self.server.startsWith('https://'))",message="cert auth needs an https:// server"
// +kubebuilder:validation:XValidation:rule="!has(self.getParameters) || !has(self.method) || self.method == 'GET'",message="getParameters are sent with method GET only: use parameters for a request body"
type VaultDynamicSecretSpec struct {
	// Controller is the controller class (eso's --controller-class) that
	// may generate with this configuration; empty for an eso started
	// without one.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Controller string `json:"controller,omitempty"`

	// Provider is upstream ESO's shape of the connection: a v1 SecretStore's
	// Vault block (server, namespace, caBundle, caProvider, auth). Its path,
	// version and KV settings do not apply to a generator: the request goes
	// to spec.path. References may name no namespace but the generator's
	// own. Set either provider or server and auth.
	// +optional
	Provider *upstreamv1.VaultProvider `json:"provider,omitempty"`

	// Server is the Vault address, e.g. https://vault.example.com:8200.
	// +kubebuilder:validation:Pattern=`^https?://`
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Server string `json:"server,omitempty"`

	// Namespace is the Vault Enterprise namespace.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// CABundle is a PEM bundle trusted for the server's certificate.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`

	// CAProvider reads the PEM bundle trusted for the server's certificate
	// from a Secret or ConfigMap of the configuration's namespace.
	// +optional
	CAProvider *provv1.CAProvider `json:"caProvider,omitempty"`

	// Auth says how eso logs in; credentials are read from the
	// configuration's namespace.
	// +optional
	Auth *provv1.VaultAuth `json:"auth,omitempty"`

	// Path is the API path below /v1/, e.g. database/creds/app.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/v1/') && !self.startsWith('v1/')",message="path is relative to /v1/: write e.g. database/creds/app"
	Path string `json:"path"`

	// Method is the HTTP method of the request; LIST lists the keys under
	// path.
	// +kubebuilder:validation:Enum=GET;LIST;POST;PUT;DELETE
	// +kubebuilder:default=GET
	// +optional
	Method string `json:"method,omitempty"`

	// Parameters are sent as the JSON request body (POST, PUT, DELETE) or
	// as the query string (GET and LIST, where values that are not strings
	// are written as JSON).
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Parameters map[string]apiextensionsv1.JSON `json:"parameters,omitempty"`

	// GetParameters are added to the query string of a GET, each name with
	// all its values (upstream's field).
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 256)",message="a query parameter name has at most 256 characters"
	// +optional
	GetParameters map[string]VaultQueryValues `json:"getParameters,omitempty"`

	// ResultType selects the part of the response that becomes the output:
	// Data (default), Auth or Raw. Values that are not strings are JSON.
	// +kubebuilder:default=Data
	// +optional
	ResultType VaultDynamicSecretResultType `json:"resultType,omitempty"`

	// AllowEmptyResponse accepts a response without the selected part as
	// an empty output instead of an error.
	// +kubebuilder:default=false
	// +optional
	AllowEmptyResponse bool `json:"allowEmptyResponse,omitempty"`

	// RetrySettings retry the request on 5xx answers and network errors.
	// Without them the Vault client's defaults apply.
	// +optional
	RetrySettings *VaultRetrySettings `json:"retrySettings,omitempty"`
}

// VaultQueryValues are the values of one query parameter.
// +kubebuilder:validation:MaxItems=16
// +kubebuilder:validation:items:MaxLength=4096
type VaultQueryValues []string

// VaultRetrySettings bound how often, and how far apart, a request to
// Vault is retried.
type VaultRetrySettings struct {
	// MaxRetries is how many times a failed request is retried; 0 never.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +optional
	MaxRetries *int32 `json:"maxRetries,omitempty"`
	// RetryInterval is the wait between attempts, e.g. 2s.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="retryInterval must be a valid duration"
	RetryInterval *metav1.Duration `json:"retryInterval,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-generators}
// +kubebuilder:printcolumn:name="Server",type=string,JSONPath=`.spec.server`
// +kubebuilder:printcolumn:name="Provider Server",type=string,JSONPath=`.spec.provider.server`,priority=1
// +kubebuilder:printcolumn:name="Path",type=string,JSONPath=`.spec.path`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// VaultDynamicSecret generates a dynamic secret with one Vault API request;
// what Vault leased is revoked when the generated values are cleaned up.
type VaultDynamicSecret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec VaultDynamicSecretSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// VaultDynamicSecretList is a list of VaultDynamicSecret.
type VaultDynamicSecretList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VaultDynamicSecret `json:"items"`
}

func init() {
	SchemeBuilder.Register(&VaultDynamicSecret{}, &VaultDynamicSecretList{})
}

// ControllerClass is the class of the eso that may generate with v.
func (v *VaultDynamicSecret) ControllerClass() string { return v.Spec.Controller }
