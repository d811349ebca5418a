package v1compat

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	provv2 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// Provider configuration kinds the v1 blocks become (those of eso's
// providers; named here so this layer links no provider SDK).
const (
	kindAWSSecretsManager = "AWSSecretManager"
	kindAWSParameterStore = "AWSParameterStore"
	kindGCPSecretManager  = "GCPSecretManager"
	kindVault             = "Vault"
	kindKubernetes        = "Kubernetes"
	kindFake              = "Fake"
)

// Endpoints override provider endpoints for v1 stores, which have no
// endpoint fields (upstream reads the AWS ones from the environment too).
// They are the operator's settings, never a tenant's.
type Endpoints struct {
	AWSSecretsManager, AWSParameterStore, AWSSTS string
	GCPSecretManager                             string
}

// Translation is what a v1 store's provider block becomes: the provider
// configuration (Inline, or for plugin the remote provider's reference),
// the namespace its credentials resolve in, and what eso cannot serve.
type Translation struct {
	// Inline is the provider configuration; nil for a plugin store.
	Inline client.Object
	// Config is the store's providerConfig in v2 terms.
	Config ssv2.ProviderConfig
	// Scope is ProviderNamespace with the credentials namespace in
	// Config.ProviderRef.Namespace, or ManifestNamespace (a
	// ClusterSecretStore whose references name no namespace).
	Scope ssv2.AuthenticationScope
	// Unsupported lists each field eso does not serve, with why.
	Unsupported []string
	// Notes lists fields accepted without effect in eso, with why.
	Notes []string
}

// Err is the error of an untranslatable store: it names every field.
func (t Translation) Err() error {
	if len(t.Unsupported) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", plugin.ErrInvalidConfig, strings.Join(t.Unsupported, "; "))
}

// translator carries one translation: the store it is for and the
// namespaces its references name.
type translator struct {
	cluster    bool
	namespace  string // the SecretStore's; empty for a ClusterSecretStore
	endpoints  Endpoints
	out        Translation
	namespaces []string // named by references, each once
	unnamed    bool     // some reference names no namespace
}

// Refuse records a field eso cannot serve.
func (t *translator) Refuse(path, why string) {
	t.out.Unsupported = append(t.out.Unsupported, path+": "+why)
}

// Namespace records the namespace a reference at path names: a SecretStore
// may name only its own, a ClusterSecretStore one for all its references.
func (t *translator) Namespace(path string, ns *string) {
	if ns == nil || *ns == "" {
		t.unnamed = true
		return
	}
	if !t.cluster && *ns != t.namespace {
		t.Refuse(path+".namespace", "a SecretStore reads only its own namespace")
		return
	}
	if !slices.Contains(t.namespaces, *ns) {
		t.namespaces = append(t.namespaces, *ns)
	}
}

// errNoProvider: the schema requires exactly one provider; a store stored
// before that rule existed may have none.
var errNoProvider = errors.New("spec.provider names no provider eso serves")

// Translate turns the provider block of a v1 store (a SecretStore of
// namespace, or a ClusterSecretStore when cluster) into eso's provider
// configuration.
func Translate(p v1stores.SecretStoreProvider, cluster bool, namespace, name string, endpoints Endpoints) Translation {
	t := &translator{cluster: cluster, namespace: namespace, endpoints: endpoints}
	var cfg client.Object
	switch {
	case p.AWS != nil:
		cfg = t.aws(p.AWS)
	case p.GCPSM != nil:
		cfg = t.gcp(p.GCPSM)
	case p.Vault != nil:
		cfg = t.vault(p.Vault)
	case p.Kubernetes != nil:
		cfg = t.kubernetes(p.Kubernetes)
	case p.Fake != nil:
		cfg = t.fake(p.Fake)
	case p.Plugin != nil:
		return t.plugin(p.Plugin)
	default:
		t.Refuse("spec.provider", errNoProvider.Error())
		return t.out
	}
	credentials := t.credentialsNamespace()
	cfg.SetName(name)
	cfg.SetNamespace(credentials)
	t.out.Inline = cfg
	t.out.Config.ProviderRef = ssv2.ProviderRef{Kind: kindOf(cfg), Name: name, Namespace: credentials}
	return t.out
}

// credentialsNamespace is where the store's credentials resolve: its own
// namespace for a SecretStore; for a ClusterSecretStore the one namespace
// its references name, or each ExternalSecret's own when they name none
// (upstream's referent authentication).
func (t *translator) credentialsNamespace() string {
	t.out.Scope = ssv2.ProviderNamespace
	switch {
	case !t.cluster:
		return t.namespace
	case len(t.namespaces) == 0:
		t.out.Scope = ssv2.ManifestNamespace
		return ""
	case len(t.namespaces) > 1 || t.unnamed:
		t.Refuse("spec.provider", "the credential references of a ClusterSecretStore must all name one namespace, or none (then each ExternalSecret's own is used); these name "+
			strings.Join(t.namespaces, ", ")+unnamedNote(t.unnamed))
	}
	return t.namespaces[0]
}

func unnamedNote(unnamed bool) string {
	if unnamed {
		return " and none"
	}
	return ""
}

// kindOf names the configuration kind of a translated block.
func kindOf(cfg client.Object) string {
	switch c := cfg.(type) {
	case *provv2.AWSSecretManager:
		return kindAWSSecretsManager
	case *provv2.AWSParameterStore:
		return kindAWSParameterStore
	case *provv2.GCPSecretManager:
		return kindGCPSecretManager
	case *provv2.Vault:
		return kindVault
	case *provv2.Kubernetes:
		return kindKubernetes
	case *provv2.Fake:
		return kindFake
	default:
		panic(fmt.Sprintf("v1compat: no kind for %T", c))
	}
}

// plugin forwards to a provider service: the store is a remote v2 store.
func (t *translator) plugin(p *v1stores.PluginProvider) Translation {
	t.out.Config = ssv2.ProviderConfig{Address: p.Address, Auth: p.Auth, ProviderRef: p.ProviderRef}
	t.out.Scope = ssv2.ProviderNamespace
	if t.cluster && p.ProviderRef.Namespace == "" {
		t.Refuse("spec.provider.plugin.providerRef.namespace", "a ClusterSecretStore must name the configuration's namespace")
	}
	if !t.cluster && p.ProviderRef.Namespace != "" && p.ProviderRef.Namespace != t.namespace {
		t.Refuse("spec.provider.plugin.providerRef.namespace", "a SecretStore reads only its own namespace")
	}
	return t.out
}
