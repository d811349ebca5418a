package pushsecret

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/app/secrettemplate"
	"github.com/eso-dev/eso/app/steps"
)

// syncScope is one sync of one PushSecret: built once by Reconcile, read
// and filled in by the steps in order.
type syncScope struct {
	ps *esv1alpha1.PushSecret
	// before is the status as read, so the status is written only if it
	// changed.
	before *esv1alpha1.PushSecretStatus
	// budget bounds everything the sync reads, renders, rewrites and
	// builds, over all its sources, entries and stores.
	budget *secrettemplate.Budget

	sources    []corev1.Secret
	stores     []*pushStore
	tplSources secrettemplate.Sources
	// stamp identifies what this sync pushes from (versionStamp).
	stamp string
	// wait: when the next sync is due, for a sync that ends endUntil.
	wait time.Duration
	// data is what is pushed: the sources through the template.
	data map[string][]byte
	// planned are each usable store's entries by remote ID, keyed by the
	// store's status key.
	planned map[string]map[string]entry
	// holds is what each store will hold of this PushSecret once the sync
	// is done, as status.syncedPushSecrets records it.
	holds map[string]synced
	// failedDeletions are recorded so they are tried again.
	failedDeletions []deletion
	// problems and errs are the failures of single stores: the other
	// stores still get their pushes.
	problems []string
	errs     []error
}

// fail records the failure of one store (or of the deletions).
func (sc *syncScope) fail(key string, err error) {
	sc.problems, sc.errs = append(sc.problems, key+": "+err.Error()), append(sc.errs, err)
}

// end is how a step ends the sync early.
type end int

const (
	// next: go on with the next step.
	next end = iota
	// endQuietly: nothing to do or record: no store is selected (a label
	// selector matches none, or every store is another controller
	// class's). As upstream, no condition is set and nothing is deleted.
	endQuietly
	// endUntil: nothing changed and no refresh is due, or the last push was
	// too recent; the next sync is after sc.wait.
	endUntil
)

// step is one stage of a sync; its function's name is its name.
type step = steps.Step[*syncScope, end]

// steps are the stages of a sync, in order. Stores are planned, then what
// left the spec is deleted, then the rest is pushed: deleting first means
// a secret that a dropped store and a kept one both reach (two
// configurations over one backend) is deleted and pushed again, never
// pushed and then deleted.
func (r *Reconciler) steps() []step {
	return []step{
		checkDataToNames,
		r.readSources,
		r.findStores,
		checkDataToSelectors,
		r.readTemplateSources,
		r.checkDue,
		r.render,
		planEntries,
		r.deleteDropped,
		r.pushEntries,
	}
}

// sync runs the steps and records their outcome. Nothing is asked of the
// providers when neither the PushSecret, its sources nor its stores
// changed and no refresh is due.
func (r *Reconciler) sync(ctx context.Context, sc *syncScope) (ctrl.Result, error) {
	end, err := steps.Run(ctx, sc, r.steps()...)
	switch {
	case errors.Is(err, errSourceGone):
		return r.sourceGone(ctx, sc.ps, sc.before, err)
	case err != nil:
		return r.failed(ctx, sc.ps, sc.before, err)
	case end == endQuietly:
		return ctrl.Result{}, nil
	case end == endUntil:
		return ctrl.Result{RequeueAfter: sc.wait}, nil
	}
	return r.finish(ctx, sc)
}

// checkDataToNames refuses a dataTo entry that names a store
// secretStoreRefs does not name, before anything is read (upstream's order).
func checkDataToNames(_ context.Context, sc *syncScope) (end, error) {
	return next, dataToNamesListed(&sc.ps.Spec)
}

// readSources reads the Secrets the PushSecret pushes (or its generated
// value), charged to the sync's budget.
func (r *Reconciler) readSources(ctx context.Context, sc *syncScope) (end, error) {
	sources, err := r.sourceSecrets(ctx, sc.ps, sc.budget)
	sc.sources = sources
	return next, err
}

// findStores resolves the stores the PushSecret names or selects; one that
// cannot be used now keeps its error, so the others still get their
// pushes.
func (r *Reconciler) findStores(ctx context.Context, sc *syncScope) (end, error) {
	current, err := resolveStores(ctx, r.Resolver, sc.ps)
	if err != nil {
		return next, err
	}
	if len(current) == 0 {
		return endQuietly, nil
	}
	sc.stores = current
	return next, nil
}

// checkDataToSelectors refuses a dataTo entry whose labelSelector matches
// none of the stores found: it would push nothing, silently.
func checkDataToSelectors(_ context.Context, sc *syncScope) (end, error) {
	return next, dataToSelectorsMatch(sc.ps.Spec.DataTo, sc.stores)
}

// readTemplateSources reads the ConfigMaps and Secrets the template reads.
func (r *Reconciler) readTemplateSources(ctx context.Context, sc *syncScope) (end, error) {
	if sc.ps.Spec.Template == nil {
		return next, nil
	}
	var err error
	sc.tplSources, err = secrettemplate.ReadSources(ctx, r.APIReader, sc.budget, sc.ps.Namespace, sc.ps.Spec.Template)
	return next, err
}

// checkDue ends the sync when the stores still hold what the last sync
// pushed and no refresh is due, or when the last push was too recent.
func (r *Reconciler) checkDue(_ context.Context, sc *syncScope) (end, error) {
	sc.stamp = versionStamp(sc.ps, sc.sources, sc.tplSources, sc.stores)
	if wait, synced := r.refreshDue(sc.ps, sc.stamp); synced {
		sc.wait = wait
		return endUntil, nil
	}
	if wait := r.tooSoon(sc.ps); wait > 0 {
		sc.wait = wait
		return endUntil, nil
	}
	return next, nil
}

// render makes the data pushed and refuses the stores a source Secret is
// read from (a push there would feed itself).
func (r *Reconciler) render(ctx context.Context, sc *syncScope) (end, error) {
	data, err := merged(sc.budget, sc.ps, sc.sources, sc.tplSources)
	if err != nil {
		return next, err
	}
	sc.data = data
	r.refuseLoops(ctx, sc.ps, sc.sources, sc.stores)
	return next, nil
}

// planEntries plans every usable store's entries, checks them against the
// store's push policy, bounds their number over all stores and builds
// their values. A store that cannot be pushed to keeps what it holds
// until it can be asked.
func planEntries(_ context.Context, sc *syncScope) (end, error) {
	old := sc.ps.Status.SyncedPushSecrets
	plan := newPlanner(&sc.ps.Spec, sc.data, sc.budget)
	sc.planned, sc.holds = map[string]map[string]entry{}, map[string]synced{}
	total := 0
	for _, s := range sc.stores {
		key := s.target.key()
		err := s.err
		if err == nil {
			sc.planned[key], err = plan.entries(s.target)
		}
		if err == nil {
			err = checkPolicy(sc.ps, s, sc.planned[key])
		}
		// Counted before any value is made.
		if total += len(sc.planned[key]); total > maxEntries {
			return next, fmt.Errorf("%w: more than %d remote secrets over all stores", errBadEntry, maxEntries)
		}
		if err != nil {
			delete(sc.planned, key)
			sc.holds[key] = synced(old[key])
			sc.fail(key, err)
			continue
		}
		sc.holds[key] = setAsideMissing(sc.planned[key], old[key])
		if plan.missingKeys != nil {
			sc.fail(key, plan.missingKeys)
		}
	}
	return next, plan.build(sc.planned)
}

// setAsideMissing takes the entries whose source key is missing out of
// planned and returns what the store will hold: the planned entries, and
// what a missing one held before, kept (not deleted) until its key is back.
func setAsideMissing(planned map[string]entry, held synced) synced {
	out := synced{}
	for id, e := range planned {
		if !e.missing {
			out[id] = e.data
			continue
		}
		delete(planned, id)
		if d, ok := held[id]; ok {
			out[id] = d
		}
	}
	return out
}

// deleteDropped deletes, under deletionPolicy Delete, what the PushSecret
// pushed and no longer pushes.
func (r *Reconciler) deleteDropped(ctx context.Context, sc *syncScope) (end, error) {
	if sc.ps.Spec.DeletionPolicy != esv1alpha1.DeletionPolicyDelete {
		return next, nil
	}
	old := sc.ps.Status.SyncedPushSecrets
	failed, err := r.deleteRemote(ctx, sc.ps, dropped(old, sc.holds, r.backends(ctx, sc.ps, old, sc.stores)), sc.stores)
	sc.failedDeletions = failed
	if err != nil {
		sc.fail("deleting", err)
	}
	return next, nil
}

// pushEntries pushes each usable store's entries, writing only what
// differs from what the store holds.
func (r *Reconciler) pushEntries(ctx context.Context, sc *syncScope) (end, error) {
	old := sc.ps.Status.SyncedPushSecrets
	for _, s := range sc.stores {
		key := s.target.key()
		entries, ok := sc.planned[key]
		if !ok {
			continue
		}
		pushed, err := r.push(ctx, sc.ps, s, entries, old[key])
		for id, d := range sc.holds[key] {
			if _, planned := entries[id]; !planned {
				pushed[id] = d // set aside by planEntries, still held
			}
		}
		sc.holds[key] = pushed
		if err != nil {
			sc.fail(key, err)
		}
	}
	return next, nil
}

// finish records what the stores hold and the sync's outcome: Ready when
// every store got its pushes, the failures of the others otherwise.
func (r *Reconciler) finish(ctx context.Context, sc *syncScope) (ctrl.Result, error) {
	ps, before := sc.ps, sc.before
	ps.Status.SyncedPushSecrets = record(sc.holds, sc.failedDeletions)
	if len(sc.errs) > 0 {
		err := errors.Join(sc.errs...)
		r.setReady(ctx, ps, before, metav1.ConditionFalse, reasonOf(err), strings.Join(sc.problems, "; "))
		if werr := r.writeStatus(ctx, ps, before); werr != nil {
			return ctrl.Result{}, werr
		}
		return r.retry(ps, err)
	}
	at := r.Now()
	r.checked.Store(client.ObjectKeyFromObject(ps), at)
	if sc.stamp != before.SyncedResourceVersion || !equality.Semantic.DeepEqual(before.SyncedPushSecrets, ps.Status.SyncedPushSecrets) {
		ps.Status.RefreshTime = metav1.NewTime(at)
	}
	ps.Status.SyncedResourceVersion = sc.stamp
	msg := "PushSecret synced successfully"
	if ps.Spec.UpdatePolicy == esv1alpha1.UpdatePolicyIfNotExists {
		msg += ". Existing secrets in providers unchanged."
	}
	r.setReady(ctx, ps, before, metav1.ConditionTrue, esv1alpha1.ReasonSynced, msg)
	if err := r.writeStatus(ctx, ps, before); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: refreshInterval(ps)}, nil
}
