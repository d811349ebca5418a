package externalsecret

import (
	"context"
	"errors"
	"fmt"
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
			return nil, true, withShadowNote(store, err)
		}
		fp, err := resolver.Fingerprint(ctx, store)
		if err != nil {
			return nil, true, withShadowNote(store, err)
		}
		k := sourceKey(es.Namespace, ref)
		s.byKey[k] = &source{store: store, fingerprint: fp}
		s.order = append(s.order, k)
	}
	return s, true, nil
}

// withShadowNote adds the store's shadowNote to err, when it has one.
func withShadowNote(st *stores.Store, err error) error {
	if !st.Shadows {
		return err
	}
	return fmt.Errorf("%w; %s", err, shadowNote(st))
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

// shadowNote says, for the condition message, which store a reference
// without an apiVersion uses while stores of its name exist under both
// APIs, and how to pin the other; "" when no reference is in that case.
// Routing changed when v1 stores came to be served: it is never silent.
func (s *sources) shadowNote() string {
	if s == nil {
		return ""
	}
	var notes []string
	for _, k := range s.order {
		if st := s.byKey[k].store; st.Shadows {
			notes = append(notes, shadowNote(st))
		}
	}
	return strings.Join(notes, "; ")
}

func shadowNote(st *stores.Store) string {
	return st.Kind + " " + st.Name + " exists as " + stores.StoreAPIVersionV1 + " and as " + esv1.StoreAPIVersionV2Alpha1 +
		"; without secretStoreRef.apiVersion the " + stores.StoreAPIVersionV1 + " one is used: set secretStoreRef.apiVersion to " +
		esv1.StoreAPIVersionV2Alpha1 + " to use the other"
}

// storeName names a resolved store for a message about the ExternalSecret:
// kind, name and apiVersion (a SecretStore is of the ExternalSecret's own
// namespace), e.g. "SecretStore fake (external-secrets.io/v1)".
func storeName(st *stores.Store) string {
	return st.Kind + " " + st.Name + " (" + st.APIVersion + ")"
}

// inStore prefixes err, from reading through the store ref resolves to,
// with that store's name, keeping what err is.
func (s *sources) inStore(es *esv1.ExternalSecret, ref *esv1.SecretStoreRef, err error) error {
	if ref == nil {
		ref = es.Spec.SecretStoreRef
	}
	if err == nil || ref == nil {
		return err
	}
	src := s.byKey[sourceKey(s.namespace, *ref)]
	if src == nil {
		return err
	}
	return fmt.Errorf("%s: %w", storeName(src.store), err)
}

// fingerprint changes whenever any of the stores or their configurations does.
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
