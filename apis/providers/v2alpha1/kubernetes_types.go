package v2alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// KubernetesSpec reads Secrets of a namespace of this cluster or of another
// one (server.url).
// +kubebuilder:validation:XValidation:rule="!has(self.server) || !has(self.server.url) || size(self.server.url) == 0 || has(self.auth)",message="a remote server.url needs auth: eso never presents its own identity to another API server"
// +kubebuilder:validation:XValidation:rule="!has(self.server) || (has(self.server.url) && size(self.server.url) > 0) || (!has(self.server.caBundle) && !has(self.server.caProvider))",message="server.caBundle and server.caProvider need server.url: this cluster's CA is eso's own"
type KubernetesSpec struct {
	// RemoteNamespace is the namespace whose Secrets are read. Empty means the
	// namespace credentials are resolved in: the store's namespace, or for a
	// ClusterSecretStore with authenticationScope ManifestNamespace, the
	// ExternalSecret's namespace.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	RemoteNamespace string `json:"remoteNamespace,omitempty"`

	// Server is the API server read. Absent (or url empty) means this
	// cluster's, reached as eso reaches it.
	// +optional
	Server *KubernetesServer `json:"server,omitempty"`

	// Auth says whose identity reads the Secrets. Absent means eso's own
	// identity, which may only read the credentials namespace itself of this
	// cluster: a RemoteNamespace naming another namespace, or a server.url,
	// then needs auth.
	// +optional
	Auth *KubernetesAuth `json:"auth,omitempty"`
}

// KubernetesServer is another cluster's API server and the CA trusted for
// its serving certificate.
// +kubebuilder:validation:XValidation:rule="!(has(self.caBundle) && has(self.caProvider))",message="set caBundle or caProvider, not both"
type KubernetesServer struct {
	// URL of the API server, e.g. https://hub.example.com:6443.
	// +kubebuilder:validation:Pattern=`^https://`
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	URL string `json:"url,omitempty"`

	// CABundle is a PEM bundle trusted for the server's certificate; absent
	// (with caProvider) means the system roots. At most 128 KiB as stored
	// (base64), about 96 KiB of PEM.
	// +kubebuilder:validation:MaxLength=131072
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`

	// CAProvider reads the PEM bundle trusted for the server's certificate
	// from a Secret or ConfigMap of the credentials namespace, so a rotated
	// CA is picked up without editing this configuration.
	// +optional
	CAProvider *CAProvider `json:"caProvider,omitempty"`
}

// KubernetesAuth is the identity the Kubernetes provider reads and writes
// with: exactly one method.
// +kubebuilder:validation:XValidation:rule="[has(self.token), has(self.cert), has(self.serviceAccount)].filter(x, x).size() == 1",message="auth needs exactly one of token, cert or serviceAccount"
type KubernetesAuth struct {
	// Token presents a bearer token read from a Secret of the credentials
	// namespace.
	// +optional
	Token *KubernetesTokenAuth `json:"token,omitempty"`
	// Cert presents a TLS client certificate and its key, PEM in Secrets of
	// the credentials namespace.
	// +optional
	Cert *KubernetesCertAuth `json:"cert,omitempty"`
	// ServiceAccount is a ServiceAccount of the credentials namespace; eso
	// requests a short-lived token for it from this cluster (TokenRequest)
	// and presents it to the server read. Against another cluster, set
	// audiences to what that server accepts.
	// +optional
	ServiceAccount *KubernetesServiceAccount `json:"serviceAccount,omitempty"`
}

// KubernetesTokenAuth names the Secret key holding a bearer token.
type KubernetesTokenAuth struct {
	BearerToken SecretKeySelector `json:"bearerToken"`
}

// KubernetesCertAuth names the Secret keys of a PEM client certificate and
// its private key.
type KubernetesCertAuth struct {
	ClientCert SecretKeySelector `json:"clientCert"`
	ClientKey  SecretKeySelector `json:"clientKey"`
}

// KubernetesServiceAccount names a ServiceAccount of the credentials namespace.
type KubernetesServiceAccount struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Audiences requested for the token; empty means the API server's default.
	// +optional
	Audiences []string `json:"audiences,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=k8sprovider,categories={external-secrets,external-secrets-providers}
// +kubebuilder:printcolumn:name="Remote Namespace",type=string,JSONPath=`.spec.remoteNamespace`
// +kubebuilder:printcolumn:name="Server",type=string,JSONPath=`.spec.server.url`
// +kubebuilder:printcolumn:name="ServiceAccount",type=string,JSONPath=`.spec.auth.serviceAccount.name`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Kubernetes is a provider configuration that reads Secrets of this cluster
// or of another one.
type Kubernetes struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec KubernetesSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// KubernetesList is a list of Kubernetes.
type KubernetesList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Kubernetes `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Kubernetes{}, &KubernetesList{})
}
