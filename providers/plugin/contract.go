package plugin

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// Ref names a provider-owned configuration object, e.g. Fake default/demo.
type Ref struct {
	Kind      string
	Name      string
	Namespace string
}

// Scope is the boundary a request runs in. Core computes it from the store and
// the object using it; a provider must stay inside it.
type Scope struct {
	// Namespace is where the provider resolves the credentials (Secrets,
	// ServiceAccounts) its configuration references, and the only namespace in
	// which it may act with eso's own identity. Empty only in Validate for a
	// ClusterSecretStore with authenticationScope ManifestNamespace, where it is
	// decided per request.
	Namespace string
}

// Provider builds clients for one provider kind.
type Provider interface {
	// Kind is the API kind of the provider's configuration, e.g. "Fake".
	Kind() string
	// NewClient reads the configuration ref names and returns a client bound to
	// scope. Core reuses the client while the store and configuration are unchanged.
	NewClient(ctx context.Context, ref Ref, scope Scope) (SecretsClient, error)
	// Validate checks the configuration without reading any secret.
	Validate(ctx context.Context, ref Ref, scope Scope) error
}

// ConfigClients is implemented by in-process providers: they also build
// clients from a configuration object in hand instead of one a Ref names (a
// v1 store carries its provider's configuration inline). cfg is the
// provider's configuration type, as its Registration's NewConfig returns it.
type ConfigClients interface {
	NewClientFromConfig(ctx context.Context, cfg client.Object, scope Scope) (SecretsClient, error)
	ValidateConfig(ctx context.Context, cfg client.Object, scope Scope) error
}

// SecretsClient reads secrets from one provider configuration. Errors name keys,
// never values.
type SecretsClient interface {
	// GetSecret returns one secret, or one property of a structured secret.
	GetSecret(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) ([]byte, error)
	// GetSecretMap returns the top-level fields of a structured secret.
	GetSecretMap(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) (map[string][]byte, error)
	// GetAllSecrets returns the secrets a find selects, by name.
	GetAllSecrets(ctx context.Context, find esv1.ExternalSecretFind) (map[string][]byte, error)
	// Capabilities says whether the client can read, write or both.
	Capabilities() Capabilities
	// Close releases what the client holds (connections, tokens).
	Close(ctx context.Context) error
}

// PushRequest is one value to write to a provider.
type PushRequest struct {
	// RemoteKey is the remote secret to write.
	RemoteKey string
	// Property, if set, is the field of a JSON object secret to set; the
	// other fields are kept.
	Property string
	// Value is written as is.
	Value []byte
	// Adopt: a remote secret without eso's ManagedBy mark is marked as
	// eso's and written, instead of refused with ErrNotManaged (a
	// PushSecret's adoptionPolicy Adopt). From then on it is eso's.
	Adopt bool
	// Metadata is the PushSecret entry's provider-specific metadata as
	// written (DecodePushMetadata reads it): tags, a KMS key, a description.
	// A provider that applies none refuses a request carrying it
	// (ErrNotSupported) rather than push without it.
	Metadata []byte
}

// ManagedBy is how providers mark the remote secrets eso created (a tag,
// label or custom metadata entry, named ManagedByKey), so that eso never
// overwrites or deletes a secret someone else made.
const (
	ManagedByKey   = "managed-by"
	ManagedByValue = "external-secrets"
)

// Writer is implemented by clients that can write (Capabilities ReadWrite).
// Writes only ever touch remote secrets eso created: a secret without the
// ManagedBy mark is refused with ErrNotManaged.
type Writer interface {
	// PushSecret creates or updates a remote secret (or one property of it).
	PushSecret(ctx context.Context, req PushRequest) error
	// DeleteSecret deletes a remote secret, or only one property of it.
	DeleteSecret(ctx context.Context, remoteKey, property string) error
	// SecretExists reports whether the remote secret exists.
	SecretExists(ctx context.Context, remoteKey string) (bool, error)
}

// ErrNotManaged: a write would touch a remote secret eso did not create.
var ErrNotManaged = errors.New("remote secret exists and was not created by eso")

// JSONProperties is implemented by clients whose properties are JSON paths
// into the secret's value: GetSecret(ref) is Property(GetSecret(ref without
// property), ref.Property) and GetSecretMap(ref) is FieldMap(GetSecret(ref)).
// Core then reads each remote secret once per sync, however many properties
// of it an ExternalSecret uses.
type JSONProperties interface {
	PropertiesAreJSONPaths()
}

// Capabilities of a provider.
type Capabilities string

const (
	ReadOnly  Capabilities = "ReadOnly"
	WriteOnly Capabilities = "WriteOnly"
	ReadWrite Capabilities = "ReadWrite"
)

// Errors providers wrap (fmt.Errorf("%w: ...")) so core can tell what happened
// and set the right condition.
var (
	// ErrSecretNotFound: the remote secret or version does not exist.
	ErrSecretNotFound = errors.New("secret not found")
	// ErrPropertyNotFound: the secret exists but has no such property (or is
	// not structured). Unlike ErrSecretNotFound it never counts as the secret
	// being gone, so it cannot trigger deletionPolicy Delete.
	ErrPropertyNotFound = errors.New("property not found")
	// ErrConfigNotFound: the configuration object named by the ref does not exist.
	ErrConfigNotFound = errors.New("provider configuration not found")
	// ErrInvalidConfig: the configuration cannot work as written.
	ErrInvalidConfig = errors.New("invalid provider configuration")
	// ErrNotSupported: the provider cannot do what the request asks (e.g.
	// metadataPolicy Fetch on a provider without metadata).
	ErrNotSupported = errors.New("not supported by this provider")
	// ErrOutOfScope: the request would leave its Scope (e.g. another namespace).
	ErrOutOfScope = errors.New("refused: outside the store's scope")
	// ErrAuthFailed: the provider did not accept the credentials (wrong,
	// expired or revoked) or the login itself was refused. Unlike
	// ErrOutOfScope the identity is not established at all. Core reports it
	// as the store's AuthenticationFailed condition and logs in afresh on the
	// next attempt.
	ErrAuthFailed = errors.New("authentication failed")
)

// AuthChecker is implemented by clients that can prove their credentials are
// accepted without reading any secret (e.g. STS GetCallerIdentity, Vault
// token lookup-self). The store controller calls it when it validates a store,
// on the same cached client the ExternalSecrets use, so a check costs no extra
// login. Errors wrap ErrAuthFailed when the credentials were refused; other
// errors (the provider unreachable) are treated as transient.
type AuthChecker interface {
	CheckAuth(ctx context.Context) error
}

// Deps are what in-process providers are built from. Remote providers (provider
// mode) get the same from their own process.
type Deps struct {
	// Client reads provider configuration objects through the manager's cache
	// and writes (e.g. TokenRequests) straight to the API server.
	Client client.Client
	// APIReader reads straight from the API server: for objects eso does not
	// cache, such as Secrets it does not manage.
	APIReader client.Reader
	// RESTConfig is eso's own connection, for providers that build clients of
	// their own (e.g. with a ServiceAccount token).
	RESTConfig *rest.Config
	// AmbientCredentials lets provider configurations without auth use eso's
	// own cloud identity (environment, IRSA, instance or workload identity).
	// Off by default: any namespace that can create a configuration would
	// otherwise borrow eso's identity.
	AmbientCredentials bool
}

// ErrNoAmbientCredentials: a configuration without auth, while eso does not
// lend its own cloud identity.
var ErrNoAmbientCredentials = fmt.Errorf("%w: auth is required: eso lends its own cloud identity only when started with --allow-ambient-credentials", ErrInvalidConfig)

// ReadConfig reads the configuration object ref names into obj. A missing
// object is ErrConfigNotFound.
func ReadConfig(ctx context.Context, reader client.Reader, ref Ref, obj client.Object) error {
	if err := reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%w: %s %s/%s", ErrConfigNotFound, ref.Kind, ref.Namespace, ref.Name)
		}
		return fmt.Errorf("reading %s %s/%s: %w", ref.Kind, ref.Namespace, ref.Name, err)
	}
	return nil
}
