package externalsecret

import (
	"context"
	"errors"
	"strings"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// errNoStore: an entry has no sourceRef and the spec no secretStoreRef (the
// schema prevents it; this guards objects stored before it did).
var errNoStore = errors.New("entry has no sourceRef and spec.secretStoreRef is empty")

// sources are the stores one ExternalSecret reads through: spec.secretStoreRef
// and any entry's sourceRef.storeRef, each resolved once per reconcile.
type sources struct {
	resolver  *stores.Resolver
	namespace string
	byKey     map[string]*source
	order     []string // keys in first-use order, for a stable fingerprint
}

type source struct {
	store       *stores.Store
	fingerprint string
	client      plugin.SecretsClient
	release     func()
}

// sourceKey identifies the store a reference resolves to: the same name
// under two apiVersions may be two stores.
func sourceKey(namespace string, r esv1.SecretStoreRef) string {
	return refKey(namespace, r) + "@" + r.APIVersion
}

// refKey identifies a store reference as seen from namespace, whatever its
// apiVersion (the index key: a store of either API re-queues its users).
func refKey(namespace string, r esv1.SecretStoreRef) string {
	kind := r.Kind
	if kind == "" {
		kind = stores.KindSecretStore
	}
	return storeIndexKey(kind, namespace, r.Name)
}

// resolveSources finds every store of the ExternalSecret and checks it may be
// used now. ours is false when a store belongs to another controller class:
// then this eso leaves the ExternalSecret alone.
func resolveSources(ctx context.Context, resolver *stores.Resolver, es *esv1.ExternalSecret) (s *sources, ours bool, err error) {
	s = &sources{resolver: resolver, namespace: es.Namespace, byKey: map[string]*source{}}
	for _, ref := range stores.RefsOf(es) {
		store, err := resolver.Get(ctx, es.Namespace, ref)
		if err != nil {
			return nil, true, err
		}
		if !resolver.OwnsClass(store) {
			return nil, false, nil
		}
		if err := resolver.CheckUsable(ctx, store, es.Namespace); err != nil {
			return nil, true, err
		}
		fp, err := resolver.Fingerprint(ctx, store)
		if err != nil {
			return nil, true, err
		}
		k := sourceKey(es.Namespace, ref)
		s.byKey[k] = &source{store: store, fingerprint: fp}
		s.order = append(s.order, k)
	}
	return s, true, nil
}

// forget drops the cached clients of these stores, so the next sync logs in
// again with freshly read credentials (e.g. after a rotated key was refused).
func (s *sources) forget(ctx context.Context) {
	for _, src := range s.byKey {
		s.resolver.Clients().Forget(ctx, src.store.CacheKind(), src.store.Namespace, src.store.Name)
	}
}

// release gives back the clients of this sync.
func (s *sources) release() {
	if s == nil {
		return
	}
	for _, src := range s.byKey {
		if src.release != nil {
			src.release()
		}
	}
}

// fingerprint changes whenever any of the stores or their configurations does.
// shadowed names the v1 stores used for references without an apiVersion
// while a v2alpha1 store of the same name exists.
func (s *sources) shadowed() []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, k := range s.order {
		if st := s.byKey[k].store; st.Shadows {
			out = append(out, st.Kind+" "+st.Name)
		}
	}
	return out
}

func (s *sources) fingerprint() string {
	parts := make([]string, len(s.order))
	for i, k := range s.order {
		parts[i] = s.byKey[k].fingerprint
	}
	return strings.Join(parts, ",")
}

// client returns the provider client an entry reads through: the store it
// names itself, else spec.secretStoreRef's.
func (s *sources) client(ctx context.Context, es *esv1.ExternalSecret, ref *esv1.SecretStoreRef) (plugin.SecretsClient, error) {
	if ref == nil {
		ref = es.Spec.SecretStoreRef
	}
	if ref == nil {
		return nil, errNoStore
	}
	src := s.byKey[sourceKey(s.namespace, *ref)]
	if src.client == nil {
		cl, release, err := s.resolver.Client(ctx, src.store, s.namespace, src.fingerprint)
		if err != nil {
			return nil, err
		}
		src.client, src.release = memoize(cl), release // sources live for one sync: so does the memo
	}
	return src.client, nil
}
