package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterExternalSecretSpec stamps one ExternalSecret into every namespace
// its selectors match.
// +kubebuilder:validation:XValidation:rule="has(self.namespaceSelectors) || has(self.namespaces) || has(self.namespaceSelector)",message="name the target namespaces with namespaceSelectors or namespaces"
type ClusterExternalSecretSpec struct {
	// ExternalSecretSpec is the spec of every ExternalSecret created.
	ExternalSecretSpec ExternalSecretSpec `json:"externalSecretSpec"`

	// ExternalSecretName names the ExternalSecrets; defaults to this object's name.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ExternalSecretName string `json:"externalSecretName,omitempty"`

	// ExternalSecretMetadata are labels and annotations put on every ExternalSecret.
	// +optional
	ExternalSecretMetadata ExternalSecretMetadata `json:"externalSecretMetadata,omitempty"`

	// NamespaceSelectors: a namespace matching any of them gets the ExternalSecret.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	NamespaceSelectors []*metav1.LabelSelector `json:"namespaceSelectors,omitempty"`

	// Namespaces lists namespaces by name, in addition to the selectors.
	// +kubebuilder:validation:MaxItems=1024
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`

	// NamespaceSelector is the older, single form of NamespaceSelectors.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// RefreshInterval is how often the namespaces are checked again, on top
	// of reacting to namespace changes at once.
	// +kubebuilder:default="1m"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="refreshTime must be at least 1s"
	RefreshInterval *metav1.Duration `json:"refreshTime,omitempty"`
}

// ExternalSecretMetadata are labels and annotations for created ExternalSecrets.
type ExternalSecretMetadata struct {
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// ClusterExternalSecretNamespaceFailure says why a namespace did not get its ExternalSecret.
type ClusterExternalSecretNamespaceFailure struct {
	Namespace string `json:"namespace"`
	// +optional
	Reason string `json:"reason,omitempty"`
}

// ClusterExternalSecretStatus is the observed state of a ClusterExternalSecret.
type ClusterExternalSecretStatus struct {
	// ExternalSecretName is the name of the ExternalSecrets created.
	// +optional
	ExternalSecretName string `json:"externalSecretName,omitempty"`
	// ProvisionedNamespaces have the ExternalSecret, as specified.
	// +optional
	ProvisionedNamespaces []string `json:"provisionedNamespaces,omitempty"`
	// FailedNamespaces match but could not get it.
	// +optional
	FailedNamespaces []ClusterExternalSecretNamespaceFailure `json:"failedNamespaces,omitempty"`
	// Conditions: Ready says whether every matching namespace has its ExternalSecret.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Reasons of a ClusterExternalSecret's Ready condition.
const (
	ReasonProvisioned          = "Provisioned"
	ReasonNamespacesFailed     = "NamespacesFailed"
	ReasonInvalidSelector      = "InvalidSelector"
	LabelClusterExternalSecret = "externalsecrets.external-secrets.io/cluster-external-secret"
)

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=ces,categories={external-secrets}
// +kubebuilder:printcolumn:name="Store",type=string,JSONPath=`.spec.externalSecretSpec.secretStoreRef.name`
// +kubebuilder:printcolumn:name="Refresh Interval",type=string,JSONPath=`.spec.refreshTime`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterExternalSecret creates the same ExternalSecret in many namespaces
// and keeps the set in line as namespaces come and go.
type ClusterExternalSecret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterExternalSecretSpec   `json:"spec,omitempty"`
	Status ClusterExternalSecretStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterExternalSecretList is a list of ClusterExternalSecrets.
type ClusterExternalSecretList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterExternalSecret `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterExternalSecret{}, &ClusterExternalSecretList{})
}

// TargetExternalSecretName is the name of the ExternalSecrets this object creates.
func (c *ClusterExternalSecret) TargetExternalSecretName() string {
	if c.Spec.ExternalSecretName != "" {
		return c.Spec.ExternalSecretName
	}
	return c.Name
}
