package pushsecret

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// errNotOwned: a remote secret exists that eso did not create.
var errNotOwned = errors.New("remote secret not owned by eso")

// synced is what one store holds of a PushSecret, by remoteID: the
// syncedPushSecrets entry of the store.
type synced map[string]esv1alpha1.PushSecretData

// writerOf returns a client of the store that can write, and its release.
func (r *Reconciler) writerOf(ctx context.Context, s *pushStore, namespace string) (plugin.Writer, func(), error) {
	cl, release, err := r.Resolver.Client(ctx, s.store, namespace, s.fingerprint)
	if err != nil {
		return nil, nil, err
	}
	w, ok := cl.(plugin.Writer)
	if !ok {
		release()
		return nil, nil, fmt.Errorf("%w: %s cannot write", plugin.ErrNotSupported, s.store)
	}
	return w, release, nil
}

// push writes entries to store s and returns the records of what the store
// holds of this PushSecret: what landed, and what was recorded before
// (held) and failed now, since it may still be there. The provider compares
// before it writes, so a value already there costs a read and no write (no
// new version). Every entry is tried; the errors are returned together.
func (r *Reconciler) push(ctx context.Context, ps *esv1alpha1.PushSecret, s *pushStore, entries map[string]entry, held map[string]esv1alpha1.PushSecretData) (synced, error) {
	out := synced{}
	keep := func(id string) {
		if d, ok := held[id]; ok {
			out[id] = d
		}
	}
	w, release, err := r.writerOf(ctx, s, ps.Namespace)
	if err != nil {
		for id := range entries {
			keep(id)
		}
		return out, err
	}
	defer release()
	shared, err := r.sameConfiguration(ctx, s.target.key())
	if err != nil {
		for id := range entries {
			keep(id)
		}
		return out, err
	}
	var errs []error
	for _, id := range slices.Sorted(maps.Keys(entries)) {
		e := entries[id]
		ref := e.data.Match.RemoteRef
		if ps.Spec.UpdatePolicy == esv1alpha1.UpdatePolicyIfNotExists {
			exists, err := w.SecretExists(ctx, ref.RemoteKey)
			if err != nil {
				keep(id)
				errs = append(errs, fmt.Errorf("%s: %w", id, err))
				continue
			}
			if exists {
				// IfNotExists never writes a secret that exists, and records
				// it only if this PushSecret created it: what it did not
				// push is not its to delete.
				keep(id)
				continue
			}
		}
		held, err := r.heldByAnother(ctx, ps, shared, ref.RemoteKey, false)
		if err != nil {
			keep(id)
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
			continue
		}
		if held {
			// Not recorded, so never deleted by this PushSecret either.
			errs = append(errs, fmt.Errorf("%s: %w: %s", id, errHeld, ref.RemoteKey))
			continue
		}
		adopt := ps.Spec.AdoptionPolicy == esv1alpha1.AdoptionPolicyAdopt
		req := plugin.PushRequest{RemoteKey: ref.RemoteKey, Property: ref.Property, Value: e.value, Adopt: adopt}
		if e.data.Metadata != nil {
			req.Metadata = e.data.Metadata.Raw
		}
		err = w.PushSecret(ctx, req)
		if errors.Is(err, plugin.ErrNotManaged) {
			if adopt {
				err = fmt.Errorf("%w: %s exists, eso did not create it, and this provider cannot adopt it", errNotOwned, ref.RemoteKey)
			} else {
				err = fmt.Errorf("%w: %s exists and eso did not create it (adoptionPolicy Never)", errNotOwned, ref.RemoteKey)
			}
		}
		if err != nil {
			keep(id)
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
	ws := &deleteWriters{r: r, ps: ps, byKey: map[string]*pushStore{}, asked: map[string]deleteWriter{}}
	for _, s := range current {
		ws.byKey[s.target.key()] = s
	}
	defer ws.release()
	var failed []deletion
	var errs []error
	for _, d := range dels {
		w, first := ws.of(ctx, d.storeKey)
		if w.err != nil {
			if first {
				errs = append(errs, w.err)
			}
			failed = append(failed, d)
			continue
		}
		if err := r.deleteOne(ctx, ps, w, d); err != nil {
			failed, errs = append(failed, d), append(errs, err)
		}
	}
	return failed, errors.Join(errs...)
}

// deleteOne deletes one remote secret a PushSecret recorded, unless the
// store refuses deletions, another PushSecret holds it, or it lost eso's
// mark: each of those is an event, and the record goes.
func (r *Reconciler) deleteOne(ctx context.Context, ps *esv1alpha1.PushSecret, w deleteWriter, d deletion) error {
	if w.w == nil {
		return nil // the store is gone or another class's: nothing to ask
	}
	ref := d.data.Match.RemoteRef
	if !deletionAllowed(w.store) {
		r.Recorder.Eventf(ps, corev1.EventTypeWarning, esv1alpha1.ReasonRefusedByStore,
			"%s of %s was not deleted: the store's pushPolicy refuses deletion", d.id, d.storeKey)
		return nil
	}
	if held, err := r.heldByAnother(ctx, ps, w.shared, ref.RemoteKey, true); err != nil {
		return err
	} else if held {
		r.Recorder.Eventf(ps, corev1.EventTypeWarning, esv1alpha1.ReasonNotOwned,
			"%s of %s was not deleted: another PushSecret holds it too", d.id, d.storeKey)
		return nil
	}
	err := w.w.DeleteSecret(ctx, ref.RemoteKey, ref.Property)
	if errors.Is(err, plugin.ErrNotManaged) {
		// It lost eso's mark since it was pushed: it is someone else's
		// now, so it is forgotten, not deleted.
		r.Recorder.Eventf(ps, corev1.EventTypeWarning, esv1alpha1.ReasonNotOwned,
			"%s of %s was not deleted: it no longer carries eso's mark", d.id, d.storeKey)
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting %s from %s: %w", d.id, d.storeKey, err)
	}
	return nil
}

// deleteWriter is what deletions through one store are asked of.
type deleteWriter struct {
	w     plugin.Writer // nil: the store is gone or not ours, nothing to ask
	store *stores.Store
	// shared are the stores writing the same keys (sameConfiguration).
	shared []string
	err    error
}

// deleteWriters opens each store's writer once for one deleteRemote, the
// stores the PushSecret no longer names included.
type deleteWriters struct {
	r        *Reconciler
	ps       *esv1alpha1.PushSecret
	byKey    map[string]*pushStore
	asked    map[string]deleteWriter
	releases []func()
}

// of is the writer of storeKey, and whether this is its first use.
func (ws *deleteWriters) of(ctx context.Context, storeKey string) (deleteWriter, bool) {
	if w, ok := ws.asked[storeKey]; ok {
		return w, false
	}
	w := ws.open(ctx, storeKey)
	ws.asked[storeKey] = w
	return w, true
}

func (ws *deleteWriters) open(ctx context.Context, storeKey string) deleteWriter {
	r, s := ws.r, ws.byKey[storeKey]
	if s == nil {
		kind, name, _ := strings.Cut(storeKey, "/")
		store, err := r.Resolver.Get(ctx, ws.ps.Namespace, esv1.SecretStoreRef{Kind: kind, Name: name})
		switch {
		case errors.Is(err, stores.ErrStoreNotFound):
			return deleteWriter{} // gone: nothing to ask
		case err != nil:
			return deleteWriter{err: err}
		case !r.Resolver.OwnsClass(store):
			return deleteWriter{} // another controller class's now
		}
		s = usable(ctx, r.Resolver, store, ws.ps.Namespace)
	}
	if s.err != nil {
		return deleteWriter{err: fmt.Errorf("%s: %w", storeKey, s.err)}
	}
	w, release, err := r.writerOf(ctx, s, ws.ps.Namespace)
	if err != nil {
		return deleteWriter{err: fmt.Errorf("%s: %w", storeKey, err)}
	}
	shared, err := r.sameConfiguration(ctx, storeKey)
	if err != nil {
		release()
		return deleteWriter{err: err}
	}
	ws.releases = append(ws.releases, release)
	return deleteWriter{w: w, store: s.store, shared: shared}
}

func (ws *deleteWriters) release() {
	for _, release := range ws.releases {
		release()
	}
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
