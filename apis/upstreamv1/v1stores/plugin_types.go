package v1stores

import (
	"github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// PluginProvider is eso's own provider (not upstream's): it forwards every
// request to the provider service at address (eso --mode=provider), which
// reads the configuration providerRef names.
type PluginProvider struct {
	// Address of the provider service, e.g. "eso-provider-aws.eso-system.svc:8443".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Address string `json:"address"`

	// Auth is how eso authenticates to the provider service.
	// +optional
	Auth *v2alpha1.ProviderAuth `json:"auth,omitempty"`

	// ProviderRef names the provider configuration the service reads
	// (group provider.secretstore.external-secrets.io).
	ProviderRef v2alpha1.ProviderRef `json:"providerRef"`
}
