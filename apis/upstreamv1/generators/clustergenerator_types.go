package generators

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
)

// GeneratorKind is the kind a ClusterGenerator generates as: upstream's
// whole list. A kind eso does not ship is accepted here, as upstream
// accepts it, and refused when an ExternalSecret uses it.
// +kubebuilder:validation:Enum=ACRAccessToken;BeyondtrustWorkloadCredentialsDynamicSecret;CloudsmithAccessToken;ECRAuthorizationToken;Fake;GCRAccessToken;GithubAccessToken;GitlabDeployToken;QuayAccessToken;Password;SSHKey;STSSessionToken;UUID;VaultDynamicSecret;Webhook;Grafana;MFA
type GeneratorKind string

// ClusterGeneratorSpec is one generator's spec, usable from every
// namespace; credentials it references resolve in the namespace of the
// ExternalSecret or PushSecret using it.
type ClusterGeneratorSpec struct {
	// Kind says which member of generator is set.
	Kind GeneratorKind `json:"kind"`
	// Generator holds the spec of Kind.
	Generator GeneratorSpec `json:"generator"`
}

// GeneratorSpec holds exactly one generator kind's spec: the members eso
// ships, under upstream's names.
// +kubebuilder:validation:MinProperties=1
// +kubebuilder:validation:MaxProperties=1
type GeneratorSpec struct {
	ECRAuthorizationTokenSpec *genv1.ECRAuthorizationTokenSpec `json:"ecrAuthorizationTokenSpec,omitempty"`
	FakeSpec                  *genv1.FakeSpec                  `json:"fakeSpec,omitempty"`
	GCRAccessTokenSpec        *genv1.GCRAccessTokenSpec        `json:"gcrAccessTokenSpec,omitempty"`
	PasswordSpec              *genv1.PasswordSpec              `json:"passwordSpec,omitempty"`
	SSHKeySpec                *genv1.SSHKeySpec                `json:"sshKeySpec,omitempty"`
	STSSessionTokenSpec       *genv1.STSSessionTokenSpec       `json:"stsSessionTokenSpec,omitempty"`
	UUIDSpec                  *genv1.UUIDSpec                  `json:"uuidSpec,omitempty"`
	VaultDynamicSecretSpec    *genv1.VaultDynamicSecretSpec    `json:"vaultDynamicSecretSpec,omitempty"`
	MFASpec                   *genv1.MFASpec                   `json:"mfaSpec,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories={external-secrets,external-secrets-generators}

// ClusterGenerator is upstream's cluster-wide generator: one generator
// kind's spec, inline.
type ClusterGenerator struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ClusterGeneratorSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterGeneratorList is a list of ClusterGenerator.
type ClusterGeneratorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterGenerator `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterGenerator{}, &ClusterGeneratorList{})
}
