package upstreamv1

// VaultKVStoreVersion is the version of a Vault KV secrets engine.
// +kubebuilder:validation:Enum=v1;v2
type VaultKVStoreVersion string

// Vault KV versions.
const (
	VaultKVStoreV1 VaultKVStoreVersion = "v1"
	VaultKVStoreV2 VaultKVStoreVersion = "v2"
)

// VaultProvider configures a store backed by a HashiCorp Vault KV engine.
type VaultProvider struct {
	// Auth says how eso logs in to Vault.
	// +optional
	Auth *VaultAuth `json:"auth,omitempty"`

	// Server is Vault's address, e.g. https://vault.example.com:8200.
	// +kubebuilder:validation:MaxLength=2048
	Server string `json:"server"`

	// Path is the mount path of the KV engine, e.g. "secret"; for KV v2 the
	// "/data" part is added when missing.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Path *string `json:"path,omitempty"`

	// Version of the KV engine.
	// +kubebuilder:default=v2
	// +optional
	Version VaultKVStoreVersion `json:"version,omitempty"`

	// Namespace is the Vault Enterprise namespace of the KV engine, e.g. "ns1".
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Namespace *string `json:"namespace,omitempty"`

	// CABundle is a PEM bundle trusted for an https server's certificate,
	// instead of the system roots.
	// +kubebuilder:validation:MaxLength=131072
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`

	// ClientTLS is the client certificate presented when the server asks for
	// one (mutual TLS). This is not the cert auth method (auth.cert).
	// +optional
	ClientTLS VaultClientTLS `json:"tls,omitempty"`

	// CAProvider reads the trusted PEM bundle from a Secret or ConfigMap.
	// +optional
	CAProvider *CAProvider `json:"caProvider,omitempty"`

	// ReadYourWrites sends the replication state Vault returned with each
	// request, so reads see earlier writes (Vault Enterprise).
	// +optional
	ReadYourWrites bool `json:"readYourWrites,omitempty"`

	// ForwardInconsistent asks Vault to forward reads it cannot yet serve
	// consistently to the leader instead of retrying.
	// +optional
	ForwardInconsistent bool `json:"forwardInconsistent,omitempty"`

	// Headers are added to every request to Vault.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 256 && size(self[k]) <= 4096)",message="a header name has at most 256 characters and its value at most 4096"
	// +optional
	Headers map[string]string `json:"headers,omitempty"`

	// CheckAndSet configures check-and-set writes (KV v2 pushes).
	// +optional
	CheckAndSet *VaultCheckAndSet `json:"checkAndSet,omitempty"`
}

// VaultClientTLS names the client certificate and key for mutual TLS.
type VaultClientTLS struct {
	// CertSecretRef is the PEM client certificate; key defaults to tls.crt.
	// +optional
	CertSecretRef *SecretKeySelector `json:"certSecretRef,omitempty"`

	// KeySecretRef is the PEM private key; key defaults to tls.key.
	// +optional
	KeySecretRef *SecretKeySelector `json:"keySecretRef,omitempty"`
}

// VaultCheckAndSet configures check-and-set (CAS) for KV v2 writes.
type VaultCheckAndSet struct {
	// Required makes every write carry the version it replaces, so a
	// concurrent change is not overwritten.
	// +optional
	Required bool `json:"required,omitempty"`
}

// VaultAuth holds one Vault login method (tokenSecretRef, appRole,
// kubernetes, ldap, userPass, jwt, cert, iam or gcp) and optionally the
// namespace to log in to.
type VaultAuth struct {
	// Namespace is the Vault Enterprise namespace to log in to; defaults to
	// the provider's namespace.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Namespace *string `json:"namespace,omitempty"`

	// TokenSecretRef reads a Vault token from a Secret.
	// +optional
	TokenSecretRef *SecretKeySelector `json:"tokenSecretRef,omitempty"`

	// AppRole logs in with a role ID and a secret ID.
	// +optional
	AppRole *VaultAppRole `json:"appRole,omitempty"`

	// Kubernetes logs in with a ServiceAccount token at a kubernetes auth mount.
	// +optional
	Kubernetes *VaultKubernetesAuth `json:"kubernetes,omitempty"`

	// Ldap logs in with an LDAP username and password.
	// +optional
	Ldap *VaultLdapAuth `json:"ldap,omitempty"`

	// Jwt logs in with a JWT at a JWT/OIDC auth mount.
	// +optional
	Jwt *VaultJwtAuth `json:"jwt,omitempty"`

	// Cert logs in with a TLS client certificate.
	// +optional
	Cert *VaultCertAuth `json:"cert,omitempty"`

	// Iam logs in with a request signed by AWS IAM credentials.
	// +optional
	Iam *VaultIamAuth `json:"iam,omitempty"`

	// UserPass logs in with a username and password.
	// +optional
	UserPass *VaultUserPassAuth `json:"userPass,omitempty"`

	// GCP logs in with Google Cloud credentials.
	// +optional
	GCP *VaultGCPAuth `json:"gcp,omitempty"`
}

// VaultAppRole logs in with AppRole.
type VaultAppRole struct {
	// Path is the AppRole auth mount path.
	// +kubebuilder:default=approle
	// +kubebuilder:validation:MaxLength=512
	Path string `json:"path"`

	// RoleID is the role ID, when not read from roleRef.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	RoleID string `json:"roleId,omitempty"`

	// RoleRef reads the role ID from a Secret key.
	// +optional
	RoleRef *SecretKeySelector `json:"roleRef,omitempty"`

	// SecretRef reads the secret ID from a Secret key.
	SecretRef SecretKeySelector `json:"secretRef"`
}

// VaultKubernetesAuth logs in at a kubernetes auth mount.
type VaultKubernetesAuth struct {
	// Path is the kubernetes auth mount path.
	// +kubebuilder:default=kubernetes
	// +kubebuilder:validation:MaxLength=512
	Path string `json:"mountPath"`

	// ServiceAccountRef names a ServiceAccount whose requested token is presented.
	// +optional
	ServiceAccountRef *ServiceAccountSelector `json:"serviceAccountRef,omitempty"`

	// SecretRef reads a ServiceAccount token from a Secret (key defaults to
	// token). With neither, eso presents its own token.
	// +optional
	SecretRef *SecretKeySelector `json:"secretRef,omitempty"`

	// Role is the Vault role to log in as.
	// +kubebuilder:validation:MaxLength=512
	Role string `json:"role"`
}

// VaultLdapAuth logs in at an LDAP auth mount.
type VaultLdapAuth struct {
	// Path is the LDAP auth mount path.
	// +kubebuilder:default=ldap
	// +kubebuilder:validation:MaxLength=512
	Path string `json:"path"`

	// Username of the LDAP user.
	// +kubebuilder:validation:MaxLength=512
	Username string `json:"username"`

	// SecretRef reads the user's password from a Secret key.
	// +optional
	SecretRef SecretKeySelector `json:"secretRef,omitempty"`
}

// VaultUserPassAuth logs in at a userpass auth mount.
type VaultUserPassAuth struct {
	// Path is the userpass auth mount path.
	// +kubebuilder:default=userpass
	// +kubebuilder:validation:MaxLength=512
	Path string `json:"path"`

	// Username of the user.
	// +kubebuilder:validation:MaxLength=512
	Username string `json:"username"`

	// SecretRef reads the user's password from a Secret key.
	// +optional
	SecretRef SecretKeySelector `json:"secretRef,omitempty"`
}

// VaultJwtAuth logs in at a JWT/OIDC auth mount with a JWT read from a
// Secret or requested for a ServiceAccount.
type VaultJwtAuth struct {
	// Path is the JWT auth mount path.
	// +kubebuilder:default=jwt
	// +kubebuilder:validation:MaxLength=512
	Path string `json:"path"`

	// Role is the Vault role to log in as.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Role string `json:"role,omitempty"`

	// SecretRef reads the JWT from a Secret key.
	// +optional
	SecretRef *SecretKeySelector `json:"secretRef,omitempty"`

	// KubernetesServiceAccountToken requests a token for a ServiceAccount
	// (TokenRequest) and presents it.
	// +optional
	KubernetesServiceAccountToken *VaultKubernetesServiceAccountTokenAuth `json:"kubernetesServiceAccountToken,omitempty"`
}

// VaultKubernetesServiceAccountTokenAuth requests a short-lived ServiceAccount token.
type VaultKubernetesServiceAccountTokenAuth struct {
	// ServiceAccountRef names the ServiceAccount.
	ServiceAccountRef ServiceAccountSelector `json:"serviceAccountRef"`

	// Audiences of the token (default: vault); superseded by
	// serviceAccountRef.audiences.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=2048
	// +optional
	Audiences *[]string `json:"audiences,omitempty"`

	// ExpirationSeconds is the requested token lifetime (default 10
	// minutes); kept for compatibility with older manifests.
	// +optional
	ExpirationSeconds *int64 `json:"expirationSeconds,omitempty"`
}

// VaultCertAuth logs in at a cert auth mount with a TLS client certificate.
type VaultCertAuth struct {
	// Path is the cert auth mount path.
	// +kubebuilder:default=cert
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Path string `json:"path,omitempty"`

	// VaultRole is the certificate role to log in as.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	VaultRole string `json:"vaultRole,omitempty"`

	// ClientCert reads the PEM client certificate from a Secret key.
	// +optional
	ClientCert SecretKeySelector `json:"clientCert,omitempty"`

	// SecretRef reads the certificate's PEM private key from a Secret key.
	// +optional
	SecretRef SecretKeySelector `json:"secretRef,omitempty"`
}

// VaultIamAuth logs in at an AWS auth mount. Without secretRef or jwt, eso's
// own AWS identity (IRSA, EKS Pod Identity) signs the request.
type VaultIamAuth struct {
	// Path is the AWS auth mount path.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Path string `json:"path,omitempty"`

	// Region is the AWS region.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Region string `json:"region,omitempty"`

	// AWSIAMRole is an IAM role ARN assumed before signing.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	AWSIAMRole string `json:"role,omitempty"`

	// Role is the Vault role to log in as.
	// +kubebuilder:validation:MaxLength=512
	Role string `json:"vaultRole"`

	// ExternalID is passed when the IAM role is assumed.
	// +kubebuilder:validation:MaxLength=1224
	// +optional
	ExternalID string `json:"externalID,omitempty"`

	// VaultAWSIAMServerID is sent as X-Vault-AWS-IAM-Server-ID, which the
	// mount may require against replayed requests.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	VaultAWSIAMServerID string `json:"vaultAwsIamServerID,omitempty"`

	// SecretRef reads AWS access keys from a Secret.
	// +optional
	SecretRef *VaultAwsAuthSecretRef `json:"secretRef,omitempty"`

	// JWTAuth exchanges a ServiceAccount token for AWS credentials (IRSA).
	// +optional
	JWTAuth *VaultAwsJWTAuth `json:"jwt,omitempty"`
}

// VaultAwsAuthSecretRef names the Secret keys holding AWS credentials.
type VaultAwsAuthSecretRef struct {
	// AccessKeyID is the access key ID.
	// +optional
	AccessKeyID SecretKeySelector `json:"accessKeyIDSecretRef,omitempty"`

	// SecretAccessKey is the secret access key.
	// +optional
	SecretAccessKey SecretKeySelector `json:"secretAccessKeySecretRef,omitempty"`

	// SessionToken is needed when the keys are temporary credentials.
	// +optional
	SessionToken *SecretKeySelector `json:"sessionTokenSecretRef,omitempty"`
}

// VaultAwsJWTAuth names the ServiceAccount whose token is exchanged for AWS credentials.
type VaultAwsJWTAuth struct {
	// +optional
	ServiceAccountRef *ServiceAccountSelector `json:"serviceAccountRef,omitempty"`
}

// VaultGCPAuth logs in at a GCP auth mount. Without secretRef,
// workloadIdentity or serviceAccountRef, eso's own Google identity is used.
type VaultGCPAuth struct {
	// Path is the GCP auth mount path.
	// +kubebuilder:default=gcp
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Path string `json:"path,omitempty"`

	// Role is the Vault role to log in as.
	// +kubebuilder:validation:MaxLength=512
	Role string `json:"role"`

	// ProjectID is the Google Cloud project.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ProjectID string `json:"projectID,omitempty"`

	// Location is the Google Cloud location (region).
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Location string `json:"location,omitempty"`

	// SecretRef reads a service account key from a Secret.
	// +optional
	SecretRef *GCPSMAuthSecretRef `json:"secretRef,omitempty"`

	// WorkloadIdentity uses GKE Workload Identity.
	// +optional
	WorkloadIdentity *GCPWorkloadIdentity `json:"workloadIdentity,omitempty"`

	// ServiceAccountRef names a ServiceAccount to impersonate.
	// +optional
	ServiceAccountRef *ServiceAccountSelector `json:"serviceAccountRef,omitempty"`
}
