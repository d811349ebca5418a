package v1stores

import "github.com/eso-dev/eso/apis/upstreamv1"

// KubernetesProvider configures a store backed by the Secrets of a
// Kubernetes cluster (this one or another).
type KubernetesProvider struct {
	// Server is the API server to talk to.
	// +optional
	Server KubernetesServer `json:"server,omitempty"`

	// Auth says how eso authenticates to that API server.
	// +optional
	Auth *KubernetesAuth `json:"auth,omitempty"`

	// AuthRef reads a kubeconfig from a Secret key instead of server and auth.
	// +optional
	AuthRef *upstreamv1.SecretKeySelector `json:"authRef,omitempty"`

	// RemoteNamespace is the namespace whose Secrets the store reads and writes.
	// +kubebuilder:default=default
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	RemoteNamespace string `json:"remoteNamespace,omitempty"`
}

// KubernetesServer is an API server address and the CA trusted for it.
type KubernetesServer struct {
	// URL of the API server.
	// +kubebuilder:default=kubernetes.default
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	URL string `json:"url,omitempty"`

	// CABundle is a PEM bundle trusted for the server's certificate.
	// +kubebuilder:validation:MaxLength=131072
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`

	// CAProvider reads the trusted PEM bundle from a Secret or ConfigMap.
	// +optional
	CAProvider *upstreamv1.CAProvider `json:"caProvider,omitempty"`
}

// KubernetesAuth holds exactly one way to authenticate to the API server.
// +kubebuilder:validation:MinProperties=1
// +kubebuilder:validation:MaxProperties=1
type KubernetesAuth struct {
	// Cert presents a client certificate and key.
	// +optional
	Cert *CertAuth `json:"cert,omitempty"`

	// Token presents a bearer token read from a Secret.
	// +optional
	Token *TokenAuth `json:"token,omitempty"`

	// ServiceAccount presents a token requested for a ServiceAccount.
	// +optional
	ServiceAccount *upstreamv1.ServiceAccountSelector `json:"serviceAccount,omitempty"`
}

// CertAuth names the Secret keys of a PEM client certificate and its key.
type CertAuth struct {
	ClientCert upstreamv1.SecretKeySelector `json:"clientCert"`
	ClientKey  upstreamv1.SecretKeySelector `json:"clientKey"`
}

// TokenAuth names the Secret key of a bearer token.
type TokenAuth struct {
	BearerToken upstreamv1.SecretKeySelector `json:"bearerToken"`
}
