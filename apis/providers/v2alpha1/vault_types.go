package v2alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// VaultSpec configures a HashiCorp Vault KV secrets engine.
// +kubebuilder:validation:XValidation:rule="[has(self.auth.tokenSecretRef), has(self.auth.appRole), has(self.auth.kubernetes), has(self.auth.jwt), has(self.auth.cert)].filter(x, x).size() == 1",message="auth needs exactly one of tokenSecretRef, appRole, kubernetes, jwt or cert"
// +kubebuilder:validation:XValidation:rule="!(has(self.caBundle) && has(self.caProvider))",message="set caBundle or caProvider, not both"
// +kubebuilder:validation:XValidation:rule="!has(self.auth.cert) || self.server.startsWith('https://')",message="cert auth needs an https:// server"
type VaultSpec struct {
	// Server is the Vault address, e.g. https://vault.example.com:8200.
	// +kubebuilder:validation:Pattern=`^https?://`
	// +kubebuilder:validation:MaxLength=2048
	Server string `json:"server"`

	// Path is the mount path of the KV engine, e.g. "secret".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:default=secret
	// +optional
	Path string `json:"path,omitempty"`

	// Version of the KV engine: v1 or v2.
	// +kubebuilder:validation:Enum=v1;v2
	// +kubebuilder:default=v2
	// +optional
	Version string `json:"version,omitempty"`

	// Namespace is the Vault Enterprise namespace.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// CABundle is a PEM bundle trusted for the server's certificate.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`

	// CAProvider reads the PEM bundle trusted for the server's certificate
	// from a Secret or ConfigMap of the credentials namespace.
	// +optional
	CAProvider *CAProvider `json:"caProvider,omitempty"`

	// Auth says how eso logs in.
	Auth VaultAuth `json:"auth"`
}

// VaultAuth holds exactly one login method.
type VaultAuth struct {
	// TokenSecretRef reads a Vault token from a Secret.
	// +optional
	TokenSecretRef *SecretKeySelector `json:"tokenSecretRef,omitempty"`
	// AppRole logs in with a role ID and a secret ID.
	// +optional
	AppRole *VaultAppRole `json:"appRole,omitempty"`
	// Kubernetes logs in with a ServiceAccount token (TokenRequest).
	// +optional
	Kubernetes *VaultKubernetesAuth `json:"kubernetes,omitempty"`
	// JWT logs in with a ServiceAccount token at a JWT/OIDC auth mount.
	// +optional
	JWT *VaultKubernetesAuth `json:"jwt,omitempty"`
	// Cert logs in with a TLS client certificate at a cert auth mount.
	// +optional
	Cert *VaultCertAuth `json:"cert,omitempty"`
}

// VaultCertAuth logs in with a TLS client certificate and its private key,
// both PEM in Secrets of the credentials namespace.
type VaultCertAuth struct {
	// Path is the auth mount path.
	// +kubebuilder:default=cert
	// +optional
	Path string `json:"path,omitempty"`
	// Name is the certificate role to log in as; empty lets Vault pick the
	// role matching the certificate.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`
	// ClientCert is the PEM certificate (chain) presented to Vault.
	ClientCert SecretKeySelector `json:"clientCert"`
	// SecretRef is the PEM private key of the certificate.
	SecretRef SecretKeySelector `json:"secretRef"`
}

// VaultAppRole logs in with AppRole.
type VaultAppRole struct {
	// Path is the auth mount path.
	// +kubebuilder:default=approle
	// +optional
	Path string `json:"path,omitempty"`
	// +kubebuilder:validation:MinLength=1
	RoleID    string            `json:"roleId"`
	SecretRef SecretKeySelector `json:"secretRef"`
}

// VaultKubernetesAuth logs in with a ServiceAccount token of the credentials namespace.
type VaultKubernetesAuth struct {
	// MountPath is the auth mount path (default "kubernetes", or "jwt" for jwt).
	// +optional
	MountPath string `json:"mountPath,omitempty"`
	// Role is the Vault role to log in as.
	// +kubebuilder:validation:MinLength=1
	Role string `json:"role"`
	// ServiceAccountRef names the ServiceAccount whose token is presented.
	ServiceAccountRef KubernetesServiceAccount `json:"serviceAccountRef"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={external-secrets,external-secrets-providers}
// +kubebuilder:printcolumn:name="Server",type=string,JSONPath=`.spec.server`
// +kubebuilder:printcolumn:name="Path",type=string,JSONPath=`.spec.path`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Vault is a provider configuration for a HashiCorp Vault KV engine.
type Vault struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec VaultSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// VaultList is a list of Vault.
type VaultList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Vault `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Vault{}, &VaultList{})
}
