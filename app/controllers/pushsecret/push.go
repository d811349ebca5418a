package pushsecret

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers"
)

// errNotOwned: a remote secret exists that eso did not create.
var errNotOwned = errors.New("remote secret not owned by eso")

// synced is what one store holds of a PushSecret, by remoteID: the
// syncedPushSecrets entry of the store.
type synced map[string]esv1alpha1.PushSecretData

// writerOf returns a client of the store that can write, and its release.
func (r *Reconciler) writerOf(ctx context.Context, s *pushStore, namespace string) (providers.Writer, func(), error) {
	cl, release, err := r.Resolver.Client(ctx, s.store, namespace, s.fingerprint)
	if err != nil {
		return nil, nil, err
	}
	w, ok := cl.(providers.Writer)
	if !ok {
		release()
		return nil, nil, fmt.Errorf("%w: %s cannot write", providers.ErrNotSupported, s.store)
	}
	return w, release, nil
}

// push writes entries to store s and returns what the store holds of them.
// Every entry is tried; the first error is returned with what did land.
// The provider compares before it writes, so a value already there costs a
// read and no write (no new version).
func (r *Reconciler) push(ctx context.Context, ps *esv1alpha1.PushSecret, s *pushStore, entries map[string]entry) (synced, error) {
	out := synced{}
	w, release, err := r.writerOf(ctx, s, ps.Namespace)
	if err != nil {
		return out, err
	}
	defer release()
	var errs []error
	for _, id := range slices.Sorted(maps.Keys(entries)) {
		e := entries[id]
		ref := e.data.Match.RemoteRef
		if ps.Spec.UpdatePolicy == esv1alpha1.UpdatePolicyIfNotExists {
			exists, err := w.SecretExists(ctx, ref.RemoteKey)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", id, err))
				continue
			}
			if exists {
				out[id] = e.data // IfNotExists never writes a secret that exists
				continue
			}
		}
		if e.data.Metadata != nil {
			// Tags, a KMS key, a description: pushing without them would
			// give the remote secret settings nobody asked for.
			errs = append(errs, fmt.Errorf("%s: %w: provider metadata (PushSecretMetadata) is not applied by this build yet", id, errBadEntry))
			continue
		}
		err := w.PushSecret(ctx, providers.PushRequest{RemoteKey: ref.RemoteKey, Property: ref.Property, Value: e.value})
		if errors.Is(err, providers.ErrNotManaged) {
			if ps.Spec.AdoptionPolicy == esv1alpha1.AdoptionPolicyAdopt {
				err = fmt.Errorf("%w: %s exists and eso did not create it; adoptionPolicy Adopt is not served by this build yet", errNotOwned, ref.RemoteKey)
			} else {
				err = fmt.Errorf("%w: %s exists and eso did not create it (adoptionPolicy Never)", errNotOwned, ref.RemoteKey)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
			continue
		}
		out[id] = e.data
	}
	return out, errors.Join(errs...)
}

// deletion is one remote secret (or property) to delete from a store.
type deletion struct {
	storeKey, id string
	data         esv1alpha1.PushSecretData
}

// dropped lists what old records that now is not meant to hold: entries,
// keys and stores that left the spec. A remote secret that a store with the
// same backend (backendOf, by store key) still pushes is kept: two stores
// over one backend write one secret, and deleting it through the dropped
// store would delete what was just pushed.
func dropped(old esv1alpha1.SyncedPushSecretsMap, now map[string]synced, backendOf map[string]string) []deletion {
	pushedTo := map[string]bool{} // backend + "\x00" + id
	for key, held := range now {
		for id := range held {
			if b := backendOf[key]; b != "" {
				pushedTo[b+"\x00"+id] = true
			}
		}
	}
	var out []deletion
	for _, storeKey := range slices.Sorted(maps.Keys(old)) {
		for _, id := range slices.Sorted(maps.Keys(old[storeKey])) {
			if _, kept := now[storeKey][id]; kept {
				continue
			}
			if b, ok := backendOf[storeKey]; ok && b != "" && pushedTo[b+"\x00"+id] {
				continue
			}
			out = append(out, deletion{storeKey: storeKey, id: id, data: old[storeKey][id]})
		}
	}
	return out
}

// deleteRemote deletes what dels name, each through its store, and returns
// those it could not delete (to keep them recorded) and why. A store that no
// longer exists cannot be asked: its records are dropped.
func (r *Reconciler) deleteRemote(ctx context.Context, ps *esv1alpha1.PushSecret, dels []deletion, current []*pushStore) ([]deletion, error) {
	byKey := map[string]*pushStore{}
	for _, s := range current {
		byKey[s.target.key()] = s
	}
	var failed []deletion
	var errs []error
	writers := map[string]providers.Writer{}
	for _, d := range dels {
		w, ok := writers[d.storeKey]
		if !ok {
			s := byKey[d.storeKey]
			if s == nil {
				kind, name, _ := strings.Cut(d.storeKey, "/")
				store, err := r.Resolver.Get(ctx, ps.Namespace, esv1.SecretStoreRef{Kind: kind, Name: name})
				if errors.Is(err, stores.ErrStoreNotFound) {
					writers[d.storeKey] = nil // gone: nothing to ask
					continue
				}
				if err != nil {
					failed, errs = append(failed, d), append(errs, err)
					continue
				}
				s = usable(ctx, r.Resolver, store, ps.Namespace)
			}
			if s.err != nil {
				failed, errs = append(failed, d), append(errs, fmt.Errorf("%s: %w", d.storeKey, s.err))
				continue
			}
			var release func()
			var err error
			if w, release, err = r.writerOf(ctx, s, ps.Namespace); err != nil {
				failed, errs = append(failed, d), append(errs, fmt.Errorf("%s: %w", d.storeKey, err))
				continue
			}
			defer release()
			writers[d.storeKey] = w
		}
		if w == nil {
			continue
		}
		ref := d.data.Match.RemoteRef
		if err := w.DeleteSecret(ctx, ref.RemoteKey, ref.Property); err != nil {
			failed, errs = append(failed, d), append(errs, fmt.Errorf("deleting %s from %s: %w", d.id, d.storeKey, err))
		}
	}
	return failed, errors.Join(errs...)
}

// allRecorded lists every record of a status as deletions.
func allRecorded(old esv1alpha1.SyncedPushSecretsMap) []deletion {
	return dropped(old, nil, nil)
}

// backends maps each store key of current and of old to its backend; a
// store of old that left the spec is looked up (one that is gone has none).
func (r *Reconciler) backends(ctx context.Context, ps *esv1alpha1.PushSecret, old esv1alpha1.SyncedPushSecretsMap, current []*pushStore) map[string]string {
	out := map[string]string{}
	for _, s := range current {
		out[s.target.key()] = s.backend
	}
	for key := range old {
		if _, ok := out[key]; ok {
			continue
		}
		kind, name, _ := strings.Cut(key, "/")
		if store, err := r.Resolver.Get(ctx, ps.Namespace, esv1.SecretStoreRef{Kind: kind, Name: name}); err == nil {
			out[key] = usable(ctx, r.Resolver, store, ps.Namespace).backend
		}
	}
	return out
}
