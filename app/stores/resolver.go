package stores

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/grpcclient"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/plugin/pluginmetrics"
)

// Errors of store resolution; callers map them to conditions.
var (
	ErrStoreNotFound      = errors.New("store not found")
	ErrUnsupportedVersion = errors.New("unsupported store apiVersion")
	ErrOtherClass         = errors.New("store belongs to another controller class")
	ErrNotAllowed         = errors.New("namespace not allowed by the ClusterSecretStore's conditions")
	ErrStoreNotReady      = errors.New("store is not ready")
	ErrNotCompiledIn      = errors.New("provider not compiled into this binary")
	ErrRemoteNotEnabled   = errors.New("out-of-process providers (providerConfig.address) are not enabled")
	// ErrNamespaceNotWatched: the configuration is in a namespace this eso
	// does not watch (--namespace), so its cache cannot read it.
	ErrNamespaceNotWatched = errors.New("configuration namespace not watched")
)

// Resolver finds stores and hands out provider clients for them.
type Resolver struct {
	reader  client.Reader
	plugins *plugin.Plugins
	clients *ClientCache
	class   string
	// remote serves stores whose providerConfig.address is set; nil
	// refuses them.
	remote *grpcclient.Remote
	// apis are the store kinds served: V2APIs, then those of the v1
	// compatibility layer when it is compiled in.
	apis []API
	// watched are the namespaces eso's cache holds (--namespace); empty:
	// all.
	watched []string
}

// NewResolver returns a resolver reading stores through reader (the manager's
// cache) and acting for controller class.
func NewResolver(reader client.Reader, plugins *plugin.Plugins, clients *ClientCache, class string) *Resolver {
	return &Resolver{reader: reader, plugins: plugins, clients: clients, class: class, apis: V2APIs}
}

// WithAPIs serves store kinds of another apiVersion beside v2alpha1.
func (r *Resolver) WithAPIs(apis ...API) *Resolver {
	r.apis = append(slices.Clip(r.apis), apis...)
	return r
}

// APIs are the store kinds served, v2alpha1 first.
func (r *Resolver) APIs() []API { return r.apis }

// api finds the served kind of apiVersion.
func (r *Resolver) api(apiVersion, kind string) (API, bool) {
	for _, a := range r.apis {
		if a.APIVersion == apiVersion && a.Kind == kind {
			return a, true
		}
	}
	return API{}, false
}

// WithWatchedNamespaces tells the resolver that eso's cache holds only
// these namespaces (empty: all), so a configuration elsewhere is refused
// with a message saying so rather than the cache's error.
func (r *Resolver) WithWatchedNamespaces(namespaces []string) *Resolver {
	r.watched = namespaces
	return r
}

// WithRemote lets the resolver serve stores whose providerConfig.address is
// set, through remote.
func (r *Resolver) WithRemote(remote *grpcclient.Remote) *Resolver {
	r.remote = remote
	return r
}

// Clients is the resolver's client cache.
func (r *Resolver) Clients() *ClientCache { return r.clients }

// Plugins are the plugins compiled into this binary.
func (r *Resolver) Plugins() *plugin.Plugins { return r.plugins }

// Get finds the store an object of namespace refers to. An apiVersion names
// the store's API; without one (as upstream manifests are written, meaning
// a v1 store) a v1 store of that name is used when the v1 layer is served
// and one exists, else the v2alpha1 store.
func (r *Resolver) Get(ctx context.Context, namespace string, ref esv1.SecretStoreRef) (*Store, error) {
	kind := KindSecretStore
	if ref.Kind == KindClusterSecretStore {
		kind = KindClusterSecretStore
	}
	if ref.APIVersion == "" {
		if v1, ok := r.api(StoreAPIVersionV1, kind); ok {
			store, err := r.read(ctx, v1, namespace, ref.Name)
			if err == nil {
				// A v2alpha1 store of the name is not used: say so, as
				// before v1 stores were served it was.
				if v2, ok := r.api(esv1.StoreAPIVersionV2Alpha1, kind); ok {
					_, err := r.read(ctx, v2, namespace, ref.Name)
					store.Shadows = err == nil
				}
				return store, nil
			}
			if !errors.Is(err, ErrStoreNotFound) && !meta.IsNoMatchError(err) {
				return nil, err
			}
		}
		ref.APIVersion = esv1.StoreAPIVersionV2Alpha1
	}
	a, ok := r.api(ref.APIVersion, kind)
	if !ok {
		if ref.APIVersion == StoreAPIVersionV1 {
			return nil, &notBuiltError{fmt.Sprintf("%s %q: this eso is built without the v1 compatibility layer; use %s stores",
				ErrUnsupportedVersion, ref.APIVersion, esv1.StoreAPIVersionV2Alpha1)}
		}
		served := []string{}
		for _, a := range r.apis {
			if !slices.Contains(served, a.APIVersion) {
				served = append(served, a.APIVersion)
			}
		}
		return nil, fmt.Errorf("%w %q: this eso serves %s", ErrUnsupportedVersion, ref.APIVersion, strings.Join(served, " and "))
	}
	return r.read(ctx, a, namespace, ref.Name)
}

// Select lists the stores of kind that selector matches (SecretStores of
// namespace, or ClusterSecretStores), sorted by name. Without an apiVersion
// both APIs are searched and a v1 store hides a v2alpha1 store of its name,
// as in Get.
func (r *Resolver) Select(ctx context.Context, apiVersion, kind, namespace string, selector labels.Selector) ([]*Store, error) {
	byName := map[string]*Store{}
	for _, a := range r.apis {
		if a.Kind != kind || (apiVersion != "" && a.APIVersion != apiVersion) {
			continue
		}
		list := a.NewList()
		opts := []client.ListOption{client.MatchingLabelsSelector{Selector: selector}}
		if !a.Cluster() {
			opts = append(opts, client.InNamespace(namespace))
		}
		if err := r.reader.List(ctx, list, opts...); err != nil {
			if meta.IsNoMatchError(err) && apiVersion == "" {
				continue
			}
			return nil, err
		}
		for _, obj := range a.Items(list) {
			if prev := byName[obj.GetName()]; prev == nil || a.APIVersion == StoreAPIVersionV1 {
				byName[obj.GetName()] = a.Wrap(obj)
			}
		}
	}
	out := slices.Collect(maps.Values(byName))
	slices.SortFunc(out, func(a, b *Store) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// notBuiltError is an apiVersion eso serves but this build lacks (the v1
// layer, left out by the nov1 tag). It is ErrUnsupportedVersion, and also
// ErrNotCompiledIn, whose outcome it has: another build of eso serves it,
// with no edit of the object that names it.
type notBuiltError struct{ msg string }

func (e *notBuiltError) Error() string { return e.msg }

func (e *notBuiltError) Is(target error) bool {
	return target == ErrUnsupportedVersion || target == ErrNotCompiledIn
}

// StoreAPIVersionV1 is upstream's store API, served by the v1 compatibility layer.
const StoreAPIVersionV1 = esv1.StoreAPIVersionV1

// read reads a store of kind a through the cache.
func (r *Resolver) read(ctx context.Context, a API, namespace, name string) (*Store, error) {
	obj := a.New()
	key := client.ObjectKey{Namespace: namespace, Name: name}
	what := a.Kind + " " + namespace + "/" + name
	if a.Cluster() {
		key.Namespace, what = "", a.Kind+" "+name
	}
	if a.APIVersion != esv1.StoreAPIVersionV2Alpha1 {
		what += " (" + a.APIVersion + ")"
	}
	if err := r.reader.Get(ctx, key, obj); err != nil {
		return nil, NotFound(err, what)
	}
	return a.Wrap(obj), nil
}

// NotFound describes a failed read of a store or generator named what: a
// missing object wraps ErrStoreNotFound.
func NotFound(err error, what string) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: %s", ErrStoreNotFound, what)
	}
	return fmt.Errorf("reading %s: %w", what, err)
}

// OwnsClass reports whether this eso acts on the store.
func (r *Resolver) OwnsClass(s *Store) bool { return s.Spec.Controller == r.class }

// CheckUsable says whether an object of namespace may sync through the store
// now: its class, the ClusterSecretStore's namespace conditions and the gating
// policy (a store whose Ready condition is False blocks syncs; Unknown does not).
func (r *Resolver) CheckUsable(ctx context.Context, s *Store, namespace string) error {
	if !r.OwnsClass(s) {
		return fmt.Errorf("%w %q", ErrOtherClass, s.Spec.Controller)
	}
	if s.Cluster != nil {
		ok, err := AllowsNamespace(ctx, r.reader, s.Cluster.Conditions, namespace)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %s may not be used from namespace %s", ErrNotAllowed, s, namespace)
		}
	}
	return Gate(s.Spec.GatingPolicy, s.Status.Conditions, s.Generation, s.String())
}

// Gate refuses a store or generator (named what) whose Ready condition is
// False for its current generation, unless its gating policy is Disabled.
// Unknown (not checked yet) does not gate.
func Gate(policy ssv2.GatingPolicy, conditions []metav1.Condition, generation int64, what string) error {
	if policy == ssv2.GatingDisabled {
		return nil
	}
	ready := meta.FindStatusCondition(conditions, ssv2.ConditionReady)
	if ready != nil && ready.Status == metav1.ConditionFalse && ready.ObservedGeneration == generation {
		return fmt.Errorf("%w: %s is not ready (%s)", ErrStoreNotReady, what, ready.Reason)
	}
	return nil
}

// Provider returns the provider serving the store, in process or, when
// providerConfig.address is set, in a provider process, and the ref of its
// configuration.
func (r *Resolver) Provider(s *Store) (plugin.Provider, plugin.Ref, error) {
	if s.Untranslatable != nil {
		return nil, plugin.Ref{}, s.Untranslatable
	}
	ref, err := s.ProviderRef()
	if err != nil {
		return nil, ref, err
	}
	if s.Spec.ProviderConfig.Address != "" {
		ep, err := r.endpoint(s)
		if err != nil {
			return nil, ref, err
		}
		return r.remote.Provider(ep, ref.Kind), ref, nil
	}
	if s.Inline == nil && len(r.watched) > 0 && !slices.Contains(r.watched, ref.Namespace) {
		// An in-process provider reads its configuration through eso's
		// cache; a change of the store or of --namespace ends this.
		return nil, ref, fmt.Errorf("%w: eso watches only namespace(s) %s (--namespace) and the configuration %s %s/%s is in none of them: "+
			"move it into one of them or add %s to --namespace", ErrNamespaceNotWatched, strings.Join(r.watched, ", "),
			ref.Kind, ref.Namespace, ref.Name, ref.Namespace)
	}
	prov, ok := r.plugins.Provider(ref.Kind)
	if !ok {
		return nil, ref, fmt.Errorf("%w: %s", ErrNotCompiledIn, ref.Kind)
	}
	if s.Inline != nil {
		if _, ok := prov.(plugin.ConfigClients); !ok {
			return nil, ref, fmt.Errorf("%w: %s takes no inline configuration", ErrNotCompiledIn, ref.Kind)
		}
	}
	return prov, ref, nil
}

// Validate has the store's provider check its configuration in scope,
// without reading a secret.
func (r *Resolver) Validate(ctx context.Context, s *Store, prov plugin.Provider, ref plugin.Ref, scope plugin.Scope) error {
	if s.Inline != nil {
		return prov.(plugin.ConfigClients).ValidateConfig(ctx, s.Inline, scope)
	}
	return prov.Validate(ctx, ref, scope)
}

// endpoint is the provider process serving the store.
func (r *Resolver) endpoint(s *Store) (grpcclient.Endpoint, error) {
	if r.remote == nil {
		return grpcclient.Endpoint{}, fmt.Errorf("%w in this eso", ErrRemoteNotEnabled)
	}
	pc := s.Spec.ProviderConfig
	ep, err := r.remote.Endpoint(pc.Address, pc.Auth, s.Namespace, pc.ProviderRef.Namespace)
	switch {
	case errors.Is(err, grpcclient.ErrPlaintextRefused):
		return ep, fmt.Errorf("%w for %s: %w", ErrRemoteNotEnabled, s, err)
	case errors.Is(err, grpcclient.ErrCertificateNamespace):
		return ep, fmt.Errorf("%w: %s: %w", ErrCrossNamespace, s, err)
	}
	return ep, err
}

// Fingerprint identifies the store's current spec and provider configuration:
// it changes whenever either does. It reads only the manager's cache, except
// for a remote provider's client certificate Secret.
func (r *Resolver) Fingerprint(ctx context.Context, s *Store) (string, error) {
	_, ref, err := r.Provider(s)
	if err != nil {
		return "", err
	}
	if s.Spec.ProviderConfig.Address != "" {
		return r.remoteFingerprint(ctx, s, ref)
	}
	if s.Inline != nil {
		// The configuration is part of the store's spec.
		return fmt.Sprintf("%s/%d", s.UID, s.Generation), nil
	}
	reg, _ := r.plugins.Index().Lookup(plugin.RoleProvider, ref.Kind)
	cfg := reg.NewConfig()
	if err := plugin.ReadConfig(ctx, r.reader, ref, cfg); err != nil {
		return "", err
	}
	s.config = cfg
	// Generation, not resourceVersion: label or annotation edits of the
	// configuration must not rebuild clients and re-read every secret.
	return fmt.Sprintf("%s/%d/%s/%d", s.UID, s.Generation, cfg.GetUID(), cfg.GetGeneration()), nil
}

// remoteFingerprint identifies a remote store's spec (address included) and
// the version of its client certificate, so a rotated certificate builds
// new clients on a new connection. The configuration counts too when its
// kind is compiled in, as core sees its changes then; otherwise only the
// provider process reads it.
func (r *Resolver) remoteFingerprint(ctx context.Context, s *Store, ref plugin.Ref) (string, error) {
	ep, err := r.endpoint(s)
	if err != nil {
		return "", err
	}
	cert, err := r.remote.CertificateVersion(ctx, ep)
	if err != nil {
		return "", err
	}
	fp := fmt.Sprintf("%s/%d/%s/%s", s.UID, s.Generation, ep.Address, cert)
	if reg, ok := r.plugins.Index().Lookup(plugin.RoleProvider, ref.Kind); ok {
		cfg := reg.NewConfig()
		switch err := plugin.ReadConfig(ctx, r.reader, ref, cfg); {
		case err == nil:
			fp += fmt.Sprintf("/%s/%d", cfg.GetUID(), cfg.GetGeneration())
		case !errors.Is(err, plugin.ErrConfigNotFound):
			return "", err
		}
	}
	return fp, nil
}

// Client returns a provider client for requests made through the store on
// behalf of an object of namespace, and a release function to call when the
// sync is done. Following the store's cachingPolicy, the client (and its
// login) is reused while fingerprint (from Fingerprint) stays the same, and
// its answers are kept for cacheConfig.ttl in a cache bounded by
// cacheConfig.maxEntries.
func (r *Resolver) Client(ctx context.Context, s *Store, namespace, fingerprint string) (plugin.SecretsClient, func(), error) {
	cl, release, _, err := r.ClientBuilt(ctx, s, namespace, fingerprint)
	return cl, release, err
}

// ClientBuilt is Client that also reports whether the client was built
// (logged in) for this call rather than reused: a reused client that is
// refused may hold credentials replaced since it logged in, a new one
// holds the current ones.
func (r *Resolver) ClientBuilt(ctx context.Context, s *Store, namespace, fingerprint string) (cl plugin.SecretsClient, release func(), built bool, err error) {
	prov, ref, err := r.Provider(s)
	if err != nil {
		return nil, nil, false, err
	}
	scope := s.Scope(namespace)
	policy := s.Spec.CachingPolicy
	key := clientKey{storeKind: s.CacheKind(), storeNamespace: s.Namespace, storeName: s.Name, scope: scope}
	build := func(ctx context.Context) (plugin.SecretsClient, error) {
		built = true
		cl, err := newClient(ctx, s, prov, ref, scope)
		return pluginmetrics.Login(ref.Kind, cl, err)
	}
	release = func() {}
	if cachesAuth(policy) {
		if cl, release, err = r.clients.Get(ctx, key, fingerprint, build); err != nil {
			return nil, nil, built, err
		}
	} else {
		// No reuse: a client (and a login) per sync, closed when it is done.
		if cl, err = build(ctx); err != nil {
			return nil, nil, built, err
		}
		release = func() { _ = cl.Close(context.WithoutCancel(ctx)) }
	}
	if cachesSecrets(policy) {
		cl = newCachingClient(cl, r.clients.Values(key, fingerprint, s.Spec.CacheConfig))
	}
	return cl, release, built, nil
}

// newClient builds a client of the store's provider: from the configuration
// a v1 store carries, or the one Fingerprint read, when the provider takes
// a configuration in hand; else from its ref.
func newClient(ctx context.Context, s *Store, prov plugin.Provider, ref plugin.Ref, scope plugin.Scope) (plugin.SecretsClient, error) {
	cfg := s.Inline
	if cfg == nil {
		cfg = s.config
	}
	if cc, ok := prov.(plugin.ConfigClients); ok && cfg != nil {
		return cc.NewClientFromConfig(ctx, cfg, scope)
	}
	return prov.NewClient(ctx, ref, scope)
}
