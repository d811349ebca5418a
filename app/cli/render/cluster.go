package render

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/controllers/pushsecret"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// fakeKind is the provider kind every store resolves to offline: the
// in-process Fake provider, holding the data file.
const fakeKind = "Fake"

// configNamespace holds the Fake configurations of ClusterSecretStores
// (a store's own namespace holds those of SecretStores).
const configNamespace = "eso-render"

// world is what a render runs against: an in-memory API server holding the
// objects read from the files. The controllers read and write it as they
// would a cluster; only the stores (and the provider behind them) differ
// between an offline render and one --from-cluster.
type world struct {
	// local is the in-memory API server.
	local client.WithWatch
	// resolver resolves stores: offline against local, where every store
	// is served by the data file; --from-cluster against the cluster.
	resolver *stores.Resolver
	// storeOf names the store each offline Fake configuration serves, so
	// that what is pushed is reported per store.
	storeOf map[types.NamespacedName]string
	// pushes records what PushSecrets push (offline only).
	pushes *pushLog
}

// newLocal is an in-memory API server holding objs, with the status
// subresources the controllers write and the indexes they list through.
func newLocal(scheme *runtime.Scheme, objs []client.Object) (client.WithWatch, error) {
	b := ctrlfake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&esv1.ExternalSecret{}, &esv1alpha1.PushSecret{})
	for field, extract := range pushsecret.Indexes() {
		b = b.WithIndex(&esv1alpha1.PushSecret{}, field, extract)
	}
	c := b.Build()
	for _, o := range objs {
		if err := c.Create(context.Background(), o); err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, client.ObjectKeyFromObject(o), err)
		}
	}
	return c, nil
}

// offlineWorld builds the world of an offline render: the objects of the
// files, and every store they name (or a file gives) served by its own
// Fake configuration holding data. fake is the Fake provider's
// registration.
func offlineWorld(scheme *runtime.Scheme, objs []client.Object, data provv1.FakeSpec, fake plugin.Registration) (*world, error) {
	w := &world{storeOf: map[types.NamespacedName]string{}, pushes: &pushLog{}}
	var out []client.Object
	have := map[string]bool{}
	namespaces := map[string]bool{configNamespace: true}
	// serve points a store at a Fake configuration of its own.
	serve := func(pc *ssv2.ProviderConfig, what, namespace string) {
		cfg := &provv1.Fake{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("eso-render-%d", len(w.storeOf))},
			Spec:       *data.DeepCopy(),
		}
		// The Fake provider keeps what is pushed per configuration UID.
		cfg.UID = uuid.NewUUID() // the Fake provider keeps pushes per UID: one render's are not another's
		*pc = ssv2.ProviderConfig{ProviderRef: ssv2.ProviderRef{Kind: fakeKind, Name: cfg.Name, Namespace: namespace}}
		w.storeOf[client.ObjectKeyFromObject(cfg)] = what
		out = append(out, cfg)
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *ssv2.SecretStore:
			serve(&o.Spec.ProviderConfig, stores.KindSecretStore+" "+o.Name, o.Namespace)
			have[storeKey(stores.KindSecretStore, o.Namespace, o.Name)] = true
		case *ssv2.ClusterSecretStore:
			serve(&o.Spec.ProviderConfig, stores.KindClusterSecretStore+" "+o.Name, configNamespace)
			have[storeKey(stores.KindClusterSecretStore, "", o.Name)] = true
		case *provv1.Fake:
			continue // the data file is the provider
		case *corev1.Namespace:
			namespaces[o.Name] = false // given: not made up below
		}
		out = append(out, o)
		if ns := o.GetNamespace(); ns != "" {
			if _, seen := namespaces[ns]; !seen {
				namespaces[ns] = true
			}
		}
	}
	// Every store a reference names, unless a file gives it.
	for _, o := range objs {
		for _, ref := range storeRefs(o) {
			key := storeKey(ref.Kind, o.GetNamespace(), ref.Name)
			if have[key] {
				continue
			}
			have[key] = true
			if ref.Kind == stores.KindClusterSecretStore {
				s := &ssv2.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: ref.Name}}
				serve(&s.Spec.ProviderConfig, ref.Kind+" "+ref.Name, configNamespace)
				out = append(out, s)
				continue
			}
			s := &ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: ref.Name}}
			serve(&s.Spec.ProviderConfig, ref.Kind+" "+ref.Name, s.Namespace)
			out = append(out, s)
		}
	}
	// ClusterSecretStore conditions read the namespaces' labels.
	for ns, makeUp := range namespaces {
		if makeUp {
			out = append(out, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		}
	}
	local, err := newLocal(scheme, out)
	if err != nil {
		return nil, err
	}
	w.local = local
	fake.NewProvider = w.pushes.recording(fake.NewProvider, w.storeOf)
	index, err := plugin.NewIndex([]plugin.Registration{fake})
	if err != nil {
		return nil, err
	}
	plugins := plugin.NewPlugins(index, plugin.Deps{Client: local, APIReader: local})
	w.resolver = stores.NewResolver(local, plugins, stores.NewClientCache(), "")
	return w, nil
}

// storeRef is a store an object names, by kind and name.
type storeRef struct{ Kind, Name string }

// storeRefs are the stores an ExternalSecret or a PushSecret names by
// name. Offline every reference, of either store API, resolves to the
// data file: the apiVersion a reference carries is dropped, so that it
// finds the v2alpha1 store made for it.
func storeRefs(o client.Object) []storeRef {
	var out []storeRef
	switch o := o.(type) {
	case *esv1.ExternalSecret:
		forEachStoreRef(o, func(ref *esv1.SecretStoreRef) { ref.APIVersion = "" })
		for _, ref := range stores.RefsOf(o) {
			out = append(out, storeRef{kindOrDefault(ref.Kind), ref.Name})
		}
	case *esv1alpha1.PushSecret:
		for i := range o.Spec.SecretStoreRefs {
			ref := &o.Spec.SecretStoreRefs[i]
			ref.APIVersion = ""
			if ref.Name != "" {
				out = append(out, storeRef{kindOrDefault(ref.Kind), ref.Name})
			}
		}
	}
	return out
}

// forEachStoreRef calls f with every store reference of es.
func forEachStoreRef(es *esv1.ExternalSecret, f func(*esv1.SecretStoreRef)) {
	if es.Spec.SecretStoreRef != nil {
		f(es.Spec.SecretStoreRef)
	}
	for i := range es.Spec.Data {
		if s := es.Spec.Data[i].SourceRef; s != nil {
			f(&s.SecretStoreRef)
		}
	}
	for i := range es.Spec.DataFrom {
		if s := es.Spec.DataFrom[i].SourceRef; s != nil && s.SecretStoreRef != nil {
			f(s.SecretStoreRef)
		}
	}
}

func kindOrDefault(kind string) string {
	if kind == stores.KindClusterSecretStore {
		return kind
	}
	return stores.KindSecretStore
}

func storeKey(kind, namespace, name string) string {
	if kind == stores.KindClusterSecretStore {
		namespace = ""
	}
	return kindOrDefault(kind) + "/" + namespace + "/" + name
}

// pushLog records the values PushSecrets push through the offline stores.
type pushLog struct {
	mu      sync.Mutex
	entries []pushed
}

// pushed is one value pushed to one store.
type pushed struct {
	Store     string
	RemoteKey string
	Property  string
	Value     []byte
}

// recording wraps the Fake provider so that each push is recorded, with
// the store whose configuration it went through, before the Fake provider
// takes it (and refuses it as a real store would, e.g. a remote key the
// data file holds that eso did not create).
func (l *pushLog) recording(newProvider func(plugin.Deps) plugin.Provider, storeOf map[types.NamespacedName]string) func(plugin.Deps) plugin.Provider {
	return func(d plugin.Deps) plugin.Provider {
		return &recordingProvider{Provider: newProvider(d), log: l, storeOf: storeOf}
	}
}

type recordingProvider struct {
	plugin.Provider
	log     *pushLog
	storeOf map[types.NamespacedName]string
}

func (p *recordingProvider) NewClient(ctx context.Context, ref plugin.Ref, scope plugin.Scope) (plugin.SecretsClient, error) {
	c, err := p.Provider.NewClient(ctx, ref, scope)
	if err != nil {
		return nil, err
	}
	w, ok := c.(plugin.Writer)
	if !ok {
		return c, nil
	}
	return &recordingClient{SecretsClient: c, w: w, log: p.log, store: p.storeOf[types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}]}, nil
}

type recordingClient struct {
	plugin.SecretsClient
	w     plugin.Writer
	log   *pushLog
	store string
}

func (c *recordingClient) PushSecret(ctx context.Context, req plugin.PushRequest) error {
	if err := c.w.PushSecret(ctx, req); err != nil {
		return err
	}
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	c.log.entries = append(c.log.entries, pushed{Store: c.store, RemoteKey: req.RemoteKey, Property: req.Property, Value: append([]byte(nil), req.Value...)})
	return nil
}

func (c *recordingClient) DeleteSecret(ctx context.Context, remoteKey, property string) error {
	return c.w.DeleteSecret(ctx, remoteKey, property)
}

func (c *recordingClient) SecretExists(ctx context.Context, remoteKey string) (bool, error) {
	return c.w.SecretExists(ctx, remoteKey)
}

// layeredReader reads from local first and, for the ConfigMaps and
// Secrets a template reads, from the cluster when local has none: a
// --from-cluster render reads the template's sources where the controller
// would. The target Secret is never read from the cluster: the render
// shows the Secret as the ExternalSecret of the files would write it.
type layeredReader struct {
	client.Reader
	cluster client.Reader
	target  types.NamespacedName
}

func (r layeredReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := r.Reader.Get(ctx, key, obj, opts...)
	if !apierrors.IsNotFound(err) || key == r.target {
		return err
	}
	switch obj.(type) {
	case *corev1.ConfigMap, *corev1.Secret:
		return r.cluster.Get(ctx, key, obj, opts...)
	}
	return err
}
