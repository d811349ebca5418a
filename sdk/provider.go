package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// Errors a provider wraps (fmt.Errorf("%w: ...")) so core reports the right
// condition; an error must name keys, never values.
var (
	// ErrNotFound: the secret or version does not exist.
	ErrNotFound = plugin.ErrSecretNotFound
	// ErrPropertyNotFound: the secret exists but has no such field.
	ErrPropertyNotFound = plugin.ErrPropertyNotFound
	// ErrInvalidConfig: the configuration cannot work as written; it waits
	// for a change.
	ErrInvalidConfig = plugin.ErrInvalidConfig
	// ErrAuthFailed: the store refused the credentials; checked again soon.
	ErrAuthFailed = plugin.ErrAuthFailed
	// ErrPermissionDenied: the credentials are accepted but may not do
	// this.
	ErrPermissionDenied = plugin.ErrOutOfScope
	// ErrNotSupported: the store cannot do what was asked.
	ErrNotSupported = plugin.ErrNotSupported
	// ErrThrottled: the store asked to slow down; retried with backoff.
	ErrThrottled = plugin.ErrThrottled
	// ErrUnavailable: the store could not be reached; retried with backoff.
	ErrUnavailable = plugin.ErrUnavailable
)

// GroupVersion is the API group and version of every provider
// configuration kind, in tree or out: a SecretStore's providerRef names
// only the kind.
var GroupVersion = provv1.GroupVersion

// Provider describes a provider whose configuration spec is of type C.
type Provider[C any] struct {
	// Kind of the configuration custom resource, e.g. "InMemory". Its CRD
	// is the provider's to install.
	Kind string
	// Validate, if set, rejects a spec that cannot work; Connect is only
	// called with specs it accepts.
	Validate func(spec *C) error
	// Connect returns a client of the store spec describes. env is the
	// namespace whose credentials the request may use.
	Connect func(ctx context.Context, spec *C, env Env) (Client, error)
}

// Client reads a store's secrets.
type Client interface {
	// Read returns key's value at version ("" for the current one); a
	// missing key or version wraps ErrNotFound. Structured secrets are
	// JSON objects: the kit extracts properties and field maps from them.
	Read(ctx context.Context, key, version string) ([]byte, error)
}

// Lister is implemented by clients whose store can list its keys, for an
// ExternalSecret's find. List returns the keys that start with prefix (""
// for all), at most limit of them: more than limit - 1 fails the find as
// too large, so a store need never hold more in memory. The kit filters
// names, reads the values and bounds the bytes.
type Lister interface {
	List(ctx context.Context, prefix string, limit int) ([]string, error)
}

// Writer is implemented by clients whose store can be written. The store
// remembers which keys eso created: eso never overwrites or deletes any
// other.
type Writer interface {
	// State reports whether key exists and whether eso created it.
	State(ctx context.Context, key string) (exists, managed bool, err error)
	// Write creates key (marked as eso's) or replaces its value.
	Write(ctx context.Context, key string, value []byte) error
	// Delete deletes key; deleting what is gone is not an error.
	Delete(ctx context.Context, key string) error
}

// Closer is implemented by clients holding something to release
// (connections, tokens) when core no longer uses them.
type Closer interface {
	Close(ctx context.Context) error
}

// AuthChecker is implemented by clients that can prove the store accepts
// their credentials without reading a secret; a refusal wraps
// ErrAuthFailed.
type AuthChecker interface {
	CheckAuth(ctx context.Context) error
}

// Env is what a client may use beyond its spec.
type Env struct {
	// Config is the namespace and name of the configuration object.
	Config types.NamespacedName
	// Namespace is where the request's credentials resolve: the only
	// namespace whose Secrets the provider may read for it.
	Namespace string
	deps      plugin.Deps
}

// SecretValue reads key of the Secret name in Namespace, e.g. a token the
// spec references.
func (e Env) SecretValue(ctx context.Context, name, key string) ([]byte, error) {
	return kit.CredentialValue(ctx, e.deps.APIReader, e.Namespace, name, key)
}

// Registrar is what Serve takes: a Provider of any spec type, or a
// Definition.
type Registrar interface {
	Registration() plugin.Registration
}

// Definition is the one way eso's own providers and generators are
// written (package plugin): a configuration type C and what is done with a
// configuration once read, against the whole contract (SecretsClient,
// Writer, find, push metadata). Provider is the simpler front over it for
// stores that read and write whole values by key; a provider that outgrows
// it writes a Definition, as in eso's tree, and is served the same way.
type Definition[C client.Object] = plugin.Definition[C]

// Registration is p as eso's registry lists it. A provider moved into
// eso's tree exports it as its package's Registration and takes one line
// in providers/catalog.
func (p Provider[C]) Registration() plugin.Registration {
	return plugin.Definition[*unstructured.Unstructured]{
		Name:        strings.ToLower(p.Kind),
		Kind:        p.Kind,
		AddToScheme: func(*runtime.Scheme) error { return nil },
		NewConfig: func() *unstructured.Unstructured {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(GroupVersion.WithKind(p.Kind))
			return u
		},
		Check: func(u *unstructured.Unstructured) error {
			_, err := p.spec(u)
			return err
		},
		NewClient: func(ctx context.Context, deps plugin.Deps, u *unstructured.Unstructured, scope plugin.Scope) (plugin.SecretsClient, error) {
			spec, err := p.spec(u)
			if err != nil {
				return nil, err
			}
			c, err := p.Connect(ctx, spec, Env{Config: types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}, Namespace: scope.Namespace, deps: deps})
			if err != nil {
				return nil, err
			}
			return newAdapter(c, u.GetNamespace()+"/"+u.GetName()), nil
		},
	}.Registration()
}

// spec decodes the object's spec strictly into C and validates it.
func (p Provider[C]) spec(u *unstructured.Unstructured) (*C, error) {
	raw, err := json.Marshal(u.Object["spec"])
	if err != nil {
		return nil, fmt.Errorf("%w: %s spec: %w", ErrInvalidConfig, p.Kind, err)
	}
	spec := new(C)
	if !bytes.Equal(raw, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(spec); err != nil {
			return nil, fmt.Errorf("%w: %s spec: %w", ErrInvalidConfig, p.Kind, err)
		}
	}
	if p.Validate != nil {
		if err := p.Validate(spec); err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				err = fmt.Errorf("%w: %w", ErrInvalidConfig, err)
			}
			return nil, err
		}
	}
	return spec, nil
}

// writeLocks serialise read-merge-write cycles of one key in this process.
var writeLocks kit.KeyedMutex

// adapter is a Client as eso's provider contract sees it.
type adapter struct {
	kit.JSONValues
	client Client
	// store names the configuration, for write locks.
	store string
}

func newAdapter(c Client, store string) *adapter {
	a := &adapter{client: c, store: store}
	a.JSONValues = kit.JSONValues{Value: a.read}
	return a
}

// read is the client's Read, bounded as every provider's answers are: a
// value must fit a Kubernetes Secret and one message to core.
func (a *adapter) read(ctx context.Context, key, version string) ([]byte, error) {
	v, err := a.client.Read(ctx, key, version)
	if err == nil && int64(len(v)) > plugin.MaxResponseBytes {
		return nil, fmt.Errorf("%w: secret %q is larger than %s", plugin.ErrTooLarge, key, plugin.FormatBytes(plugin.MaxResponseBytes))
	}
	return v, err
}

// GetAllSecrets reads every listed key the find's name and path select.
func (a *adapter) GetAllSecrets(ctx context.Context, find esv1.ExternalSecretFind) (map[string][]byte, error) {
	lister, ok := a.client.(Lister)
	if !ok {
		return nil, fmt.Errorf("%w: this store cannot list its keys (find)", ErrNotSupported)
	}
	if len(find.Tags) > 0 {
		return nil, fmt.Errorf("%w: this store has no tags (find.tags)", ErrNotSupported)
	}
	match, err := kit.NameMatcher(find)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if find.Path != nil {
		prefix = *find.Path
	}
	names, err := lister.List(ctx, prefix, plugin.MaxFindListed+1)
	if err != nil {
		return nil, err
	}
	var budget kit.FindBudget
	if err := budget.Listed(len(names)); err != nil {
		return nil, fmt.Errorf("find: %w", err)
	}
	out := map[string][]byte{}
	for _, name := range names {
		if !match(name) {
			continue
		}
		if err := kit.ReadFound(ctx, out, name, a.read, &budget); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (a *adapter) writer() (Writer, error) {
	if w, ok := a.client.(Writer); ok {
		return w, nil
	}
	return nil, fmt.Errorf("%w: this store is read-only", ErrNotSupported)
}

// PushSecret writes a value or one property of a JSON object, only over
// keys eso created, and not at all when nothing would change.
func (a *adapter) PushSecret(ctx context.Context, req plugin.PushRequest) error {
	if err := kit.NoPushMetadata(req, "this provider"); err != nil {
		return err
	}
	w, err := a.writer()
	if err != nil {
		return err
	}
	defer writeLocks.Lock(a.store + "/" + req.RemoteKey)()
	exists, managed, err := w.State(ctx, req.RemoteKey)
	if err != nil {
		return err
	}
	if exists && !managed && !req.Adopt {
		return fmt.Errorf("%w: key %q", plugin.ErrNotManaged, req.RemoteKey)
	}
	adopting := exists && !managed // Write marks it as eso's
	var current []byte
	if exists {
		if current, err = a.read(ctx, req.RemoteKey, ""); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
	}
	value := req.Value
	if req.Property != "" {
		if value, err = kit.SetProperty(current, req.Property, req.Value); err != nil {
			return err
		}
	}
	if exists && !adopting && bytes.Equal(current, value) {
		return nil
	}
	return w.Write(ctx, req.RemoteKey, value)
}

// DeleteSecret deletes a key eso created, or one property of it.
func (a *adapter) DeleteSecret(ctx context.Context, remoteKey, property string) error {
	w, err := a.writer()
	if err != nil {
		return err
	}
	defer writeLocks.Lock(a.store + "/" + remoteKey)()
	return kit.Deletion{
		Key: remoteKey, Property: property,
		State:   func(ctx context.Context) (bool, bool, error) { return w.State(ctx, remoteKey) },
		Current: func(ctx context.Context) ([]byte, error) { return a.read(ctx, remoteKey, "") },
		Rewrite: func(ctx context.Context, rest []byte) error { return w.Write(ctx, remoteKey, rest) },
		Delete:  func(ctx context.Context) error { return w.Delete(ctx, remoteKey) },
	}.Run(ctx)
}

// SecretExists reports whether the key exists.
func (a *adapter) SecretExists(ctx context.Context, remoteKey string) (bool, error) {
	w, err := a.writer()
	if err != nil {
		return false, err
	}
	exists, _, err := w.State(ctx, remoteKey)
	return exists, err
}

func (a *adapter) Capabilities() plugin.Capabilities {
	if _, ok := a.client.(Writer); ok {
		return plugin.ReadWrite
	}
	return plugin.ReadOnly
}

func (a *adapter) CheckAuth(ctx context.Context) error {
	if c, ok := a.client.(AuthChecker); ok {
		return c.CheckAuth(ctx)
	}
	return nil
}

func (a *adapter) Close(ctx context.Context) error {
	if c, ok := a.client.(Closer); ok {
		return c.Close(ctx)
	}
	return nil
}
