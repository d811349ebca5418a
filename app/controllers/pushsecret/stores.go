package pushsecret

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/app/stores"
)

// maxStores bounds the stores one PushSecret pushes to, label selectors
// included: each costs a client and a write per entry.
const maxStores = 64

// pushStore is one store a PushSecret pushes to, resolved, or the reason
// it cannot be used now.
type pushStore struct {
	target target
	store  *stores.Store
	// fingerprint changes when the store or its configuration does.
	fingerprint string
	// backend identifies the provider configuration and scope behind the
	// store: two stores with the same backend write the same remote secrets.
	backend string
	err     error
}

// resolveStores finds the stores spec names or selects, in ref order, each
// once, leaving out stores of another controller class. A store that
// cannot be used is returned with its error, so the others still get their
// pushes.
func resolveStores(ctx context.Context, resolver *stores.Resolver, ps *esv1alpha1.PushSecret) ([]*pushStore, error) {
	var out []*pushStore
	seen := map[string]string{} // status key → the store's API
	var clash error
	add := func(s *pushStore) {
		api := ""
		if s.store != nil {
			api = s.store.APIVersion
		}
		prev, ok := seen[s.target.key()]
		switch {
		case !ok:
			seen[s.target.key()] = api
			out = append(out, s)
		case prev != api && prev != "" && api != "":
			// status.syncedPushSecrets keys stores by kind and name, as
			// upstream: two stores of one name cannot both be recorded.
			clash = fmt.Errorf("%w: the references name %s under two apiVersions; push to one of them", errBadEntry, s.target.key())
		}
	}
	for i, ref := range ps.Spec.SecretStoreRefs {
		kind := kindOf(ref)
		// A labelSelector selects even when a name is given too (upstream's rule).
		if ref.LabelSelector == nil {
			store, err := resolver.Get(ctx, ps.Namespace, esv1.SecretStoreRef{Name: ref.Name, Kind: kind, APIVersion: ref.APIVersion})
			if err != nil {
				add(&pushStore{target: target{Kind: kind, Name: ref.Name}, err: err})
				continue
			}
			if resolver.OwnsClass(store) {
				add(usable(ctx, resolver, store, ps.Namespace))
			}
			continue
		}
		found, err := selectStores(ctx, resolver, ref, ps.Namespace)
		if err != nil {
			return nil, fmt.Errorf("secretStoreRefs[%d]: %w", i, err)
		}
		for _, store := range found {
			if resolver.OwnsClass(store) {
				add(usable(ctx, resolver, store, ps.Namespace))
			}
		}
	}
	if clash != nil {
		return nil, clash
	}
	if len(out) > maxStores {
		return nil, fmt.Errorf("%w: the references select %d stores, more than %d", errBadEntry, len(out), maxStores)
	}
	return out, nil
}

// usable resolves one store for a PushSecret of namespace.
func usable(ctx context.Context, resolver *stores.Resolver, store *stores.Store, namespace string) *pushStore {
	ps := &pushStore{target: target{Kind: store.Kind, Name: store.Name, Labels: store.Object.GetLabels()}, store: store}
	if ps.err = resolver.CheckUsable(ctx, store, namespace); ps.err != nil {
		return ps
	}
	if ps.fingerprint, ps.err = resolver.Fingerprint(ctx, store); ps.err != nil {
		return ps
	}
	_, ref, err := resolver.Provider(store)
	if err != nil {
		ps.err = err
		return ps
	}
	ps.backend = strings.Join([]string{store.Spec.ProviderConfig.Address, ref.Kind, ref.Namespace, ref.Name, store.Scope(namespace).Namespace}, "/")
	return ps
}

// selectStores lists the stores of kind a label selector matches: the
// namespace's SecretStores, or ClusterSecretStores.
func selectStores(ctx context.Context, resolver *stores.Resolver, ref esv1alpha1.PushSecretStoreRef, namespace string) ([]*stores.Store, error) {
	sel, err := metav1.LabelSelectorAsSelector(ref.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("%w: labelSelector: %v", errBadEntry, err)
	}
	return resolver.Select(ctx, ref.APIVersion, kindOf(ref), namespace, sel)
}

// dataToNamesListed checks that every dataTo entry naming a store (a name
// decides there, even beside a labelSelector) names one that a reference of
// secretStoreRefs names too, with the same kind. As upstream, a reference
// that selects by labels lists its name as well.
func dataToNamesListed(spec *esv1alpha1.PushSecretSpec) error {
	listed := map[string]bool{}
	for _, ref := range spec.SecretStoreRefs {
		if ref.Name != "" {
			listed[kindOf(ref)+"/"+ref.Name] = true
		}
	}
	for i, dt := range spec.DataTo {
		if dt.StoreRef == nil || dt.StoreRef.Name == "" {
			continue
		}
		if key := kindOf(*dt.StoreRef) + "/" + dt.StoreRef.Name; !listed[key] {
			return fmt.Errorf("%w: dataTo[%d].storeRef names %s, which secretStoreRefs does not name", errBadEntry, i, key)
		}
	}
	return nil
}

// dataToSelectorsMatch checks that every dataTo entry selecting stores by
// labels matches at least one of the stores found.
func dataToSelectorsMatch(dataTo []esv1alpha1.PushSecretDataTo, found []*pushStore) error {
	for i, dt := range dataTo {
		if dt.StoreRef == nil || dt.StoreRef.Name != "" || dt.StoreRef.LabelSelector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(dt.StoreRef.LabelSelector)
		if err != nil {
			return fmt.Errorf("%w: dataTo[%d].storeRef.labelSelector: %v", errBadEntry, i, err)
		}
		kind := kindOf(*dt.StoreRef)
		if !slices.ContainsFunc(found, func(s *pushStore) bool {
			return s.target.Kind == kind && sel.Matches(labels.Set(s.target.Labels))
		}) {
			return fmt.Errorf("%w: dataTo[%d].storeRef.labelSelector matches none of the %ss secretStoreRefs select", errBadEntry, i, kind)
		}
	}
	return nil
}
