package externalsecret

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/apis/lenient"
	"github.com/eso-dev/eso/app/generation"
	"github.com/eso-dev/eso/app/metrics"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/secrettemplate"
	"github.com/eso-dev/eso/app/steps"
	"github.com/eso-dev/eso/providers/plugin"
)

// syncScope is one sync of one ExternalSecret: built once by Reconcile,
// read and filled in by the steps in order.
type syncScope struct {
	es *esv1.ExternalSecret
	// before is the status as read, so the status is written only if it
	// changed.
	before *esv1.ExternalSecretStatus
	// now is the sync's clock reading.
	now time.Time

	srcs        *sources
	fingerprint string
	// target is the Secret as it is, nil when it does not exist.
	target *corev1.Secret
	// metadataOnly: target is the cached metadata (without data) of a
	// target this process verified at that version (targetRecord);
	// readWhole reads it whole before it is written.
	metadataOnly bool
	// due: the provider is read in this sync; wait: when the next one is due
	// if not.
	due  bool
	wait time.Duration
	// awaiting is what an endWaiting sync waits for.
	awaiting error
	// mergeMissing: creationPolicy Merge and no target; the provider is read
	// to report its errors, then the sync ends as SecretMissing.
	mergeMissing bool
	rotation     *generation.Rotation
	fetched      fetchResult
	// budget bounds what the whole sync reads, builds and renders (see
	// spending).
	budget *secrettemplate.Budget
	// syncedAt is when the synced data was read: now, or the time of a
	// rotation recorded late.
	syncedAt time.Time
}

// spending is the sync's one budget: every value fetched, key rewritten and
// template rendered is charged to it, whatever the number of entries.
func (sc *syncScope) spending() *secrettemplate.Budget {
	if sc.budget == nil {
		sc.budget = secrettemplate.NewBudget()
	}
	return sc.budget
}

// release gives back the store clients the sync used.
func (sc *syncScope) release() {
	if sc.srcs != nil {
		sc.srcs.release()
	}
}

// record is what the in-memory sync record keeps of a successful sync.
func (sc *syncScope) record() syncRecord {
	at := sc.syncedAt
	if at.IsZero() {
		at = sc.now
	}
	return syncRecord{at: at, uid: sc.es.UID, version: SyncedVersion(sc.es), fingerprint: sc.fingerprint}
}

// end is how a step ends the sync early.
type end int

const (
	// next: go on with the next step.
	next end = iota
	// endQuietly: nothing to do or to record (another eso's store).
	endQuietly
	// endUntil: nothing is due; the next sync is scheduled after sc.wait.
	endUntil
	// endSynced: the sync is complete; it is recorded as a success.
	endSynced
	// endWaiting: the status records an outcome that is no failure but waits
	// for sc.awaiting to arrive; checked again after sc.wait.
	endWaiting
)

// step is one stage of a sync; its function's name is its name.
type step = steps.Step[*syncScope, end]

// unrecordedError ends a sync without recording anything on the
// ExternalSecret: the failure is the API server's, and the retry will
// read everything afresh.
type unrecordedError struct{ err error }

func (e unrecordedError) Error() string { return e.err.Error() }

// steps are the stages of a sync, in order.
func (r *Reconciler) steps() []step {
	return []step{
		decodeSpec,
		r.resolveStore,
		r.loadTarget,
		r.checkDue,
		r.readWholeForGenerators,
		r.generate,
		fetchData,
		r.apply,
	}
}

// decodeSpec refuses an ExternalSecret whose spec did not decode: nothing
// of it is used.
func decodeSpec(_ context.Context, sc *syncScope) (end, error) {
	return next, lenient.Error(sc.es)
}

// resolveStore finds the stores the ExternalSecret reads through and the
// fingerprint of their configuration; another eso's store or generator
// ends the sync.
func (r *Reconciler) resolveStore(ctx context.Context, sc *syncScope) (end, error) {
	srcs, ours, err := resolveSources(ctx, r.Resolver, sc.es)
	if !ours || (r.Generation != nil && !r.Generation.Ours(ctx, sc.es)) {
		return endQuietly, nil
	}
	if err != nil {
		return next, err
	}
	sc.srcs, sc.fingerprint = srcs, srcs.fingerprint()
	return next, nil
}

// loadTarget reads the target Secret and checks eso may write it.
func (r *Reconciler) loadTarget(ctx context.Context, sc *syncScope) (end, error) {
	target, whole, err := r.readTarget(ctx, sc.es)
	if err != nil {
		return next, unrecordedError{err}
	}
	sc.target, sc.metadataOnly = target, !whole
	err = checkTarget(sc.es, target)
	if errors.Is(err, errTargetMissing) {
		// No failure (upstream's SecretMissing), but as upstream the
		// provider is read first, so a missing remote key still shows;
		// once SecretMissing is reported for this spec, or when reading
		// would run generators, it is not read again until the target
		// arrives (watched by name).
		sc.awaiting = plugin.Awaiting(plugin.ObjectRef{Kind: "Secret", Namespace: sc.es.Namespace, Name: sc.es.TargetName()}, err)
		sc.wait = outcomes.RecheckInterval
		if c := readyCondition(sc.es); generation.HasGenerators(sc.es) ||
			(c != nil && c.Reason == esv1.ReasonSecretMissing && c.ObservedGeneration == sc.es.Generation) {
			setMissing(sc.es)
			return endWaiting, nil
		}
		sc.mergeMissing, sc.due = true, true
		metrics.SyncCalls.Inc(sc.es.Name, sc.es.Namespace)
		return next, nil
	}
	return next, err
}

// checkDue decides whether the provider is read now: a periodic refresh
// may be held back by the sync windows. When it is not, a generation
// nothing will sync is acknowledged.
func (r *Reconciler) checkDue(_ context.Context, sc *syncScope) (end, error) {
	if sc.mergeMissing {
		return next, nil // read once to report what the provider says
	}
	// A target not read whole is one this process found holding what eso
	// wrote, at the version the cache still shows.
	valid := sc.metadataOnly || targetValid(sc.es, sc.target)
	due, wait, refreshOnly := r.syncDue(sc.es, valid, sc.fingerprint, sc.now)
	if due && refreshOnly {
		closed, err := windowWait(sc.es.Spec.SyncWindows, sc.now)
		if err != nil {
			return next, err
		}
		if closed > 0 {
			due, wait = false, closed
		}
	}
	if !due {
		sc.wait = wait
		// What this process synced at this very state its status already
		// says, whatever the cache shows yet.
		if rec, ok := r.lastSync(sc.es); !ok || rec.version != SyncedVersion(sc.es) {
			acknowledge(sc.es)
		}
		return endUntil, nil
	}
	sc.due = true
	metrics.SyncCalls.Inc(sc.es.Name, sc.es.Namespace)
	return next, nil
}

// readWhole reads the whole target from the API server once the provider
// is read, if only its cached metadata was read so far, and checks it again
// as it is now. A target gone in between is created, or, under Merge,
// looked for again by a retry.
func (r *Reconciler) readWhole(ctx context.Context, sc *syncScope) (end, error) {
	if sc.target == nil || !sc.metadataOnly {
		return next, nil
	}
	target, err := r.readWholeTarget(ctx, sc.es)
	if err == nil && target == nil && sc.es.Spec.Target.Merges() {
		err = fmt.Errorf("target Secret %s: %w", sc.es.TargetName(), errTargetVanished)
	}
	if err != nil {
		return next, unrecordedError{err}
	}
	sc.target, sc.metadataOnly = target, false
	return next, checkTarget(sc.es, target)
}

// readWholeForGenerators reads the whole target before generators run:
// whether a rotation is already in it depends on its data. Without
// generators the read waits for apply, which needs it only when the
// rendered output differs from what this process last wrote there.
func (r *Reconciler) readWholeForGenerators(ctx context.Context, sc *syncScope) (end, error) {
	if !generation.HasGenerators(sc.es) {
		return next, nil
	}
	return r.readWhole(ctx, sc)
}

// errTargetVanished: the target the cache showed was gone when read whole.
var errTargetVanished = errors.New("deleted while being read")

// generate runs the generators of dataFrom, unless the target already holds
// a rotation eso wrote and stopped before recording: that one is recorded
// now rather than generated a second time.
func (r *Reconciler) generate(ctx context.Context, sc *syncScope) (end, error) {
	if !generation.HasGenerators(sc.es) {
		return next, nil
	}
	if sc.target != nil && !drifted(sc.es, sc.target) {
		done, at, err := r.Generation.Completed(ctx, sc.es, sc.target)
		if err != nil {
			return next, err
		}
		if done {
			setSynced(sc.es, true, metav1.NewTime(at))
			sc.syncedAt = at
			return endSynced, nil
		}
	}
	rotation, err := r.Generation.Generate(ctx, sc.es)
	sc.rotation = rotation
	return next, err
}

// fetchData reads every entry from the provider. A refused read drops the
// store's client: the credentials may have been rotated since it logged
// in, or the provider process replaced.
func fetchData(ctx context.Context, sc *syncScope) (end, error) {
	fetched, err := fetch(ctx, sc.srcs, sc.spending(), sc.es, sc.rotation.Generated())
	if err != nil {
		if outcomes.Of(err).DropClient {
			sc.srcs.forget(ctx)
		}
		return next, err
	}
	sc.fetched = fetched
	return next, nil
}

// apply writes what was fetched to the target, or applies the deletion
// policy when nothing was. As upstream: under Delete and Merge a vanished
// remote secret is skipped and an empty result applies the policy; under
// Retain a vanished one is an error and an empty result (a find that
// matched nothing) a success, and the Secret stays as it was.
func (r *Reconciler) apply(ctx context.Context, sc *syncScope) (end, error) {
	es, fetched := sc.es, sc.fetched
	policy := es.Spec.Target.DeletionPolicy
	deleting := policy == esv1.DeletionPolicyDelete || policy == esv1.DeletionPolicyMerge
	stamp := metav1.NewTime(sc.now)
	switch {
	case !deleting && fetched.gone != nil:
		return next, fetched.gone
	case !deleting && len(fetched.data) == 0:
		setRetained(es, stamp)
		return next, nil
	}
	var out *secrettemplate.Result
	var outHash string
	if len(fetched.data) > 0 && !sc.mergeMissing {
		var err error
		if out, err = r.render(ctx, sc.spending(), es, fetched.data); err != nil {
			return next, err
		}
		sc.rotation.Annotate(out)
		outHash = renderedHash(es, out)
	}
	// Only a target this process wrote or read whole at its current
	// version, from this very output, can be left without a read.
	unchanged := out != nil && sc.metadataOnly && r.renderedInto(es, outHash)
	if sc.metadataOnly && !unchanged {
		if end, err := r.readWhole(ctx, sc); err != nil {
			return end, err
		}
	}
	switch {
	case len(fetched.data) == 0: // and the deletion policy is Delete or Merge
		return next, r.applyGone(ctx, sc, stamp)
	case sc.mergeMissing:
		// As upstream: the deletion policy first, then nothing to merge into.
		setMissing(es)
		return endWaiting, nil
	}
	return next, r.applyData(ctx, sc, out, outHash, unchanged, stamp)
}

// applyGone deletes the target (deletionPolicy Delete) or removes its keys
// (Merge) once every remote secret it was made from is gone.
func (r *Reconciler) applyGone(ctx context.Context, sc *syncScope, stamp metav1.Time) error {
	es := sc.es
	var done bool
	var err error
	var what string
	if es.Spec.Target.DeletionPolicy == esv1.DeletionPolicyDelete {
		var whole client.Object
		if sc.target != nil {
			whole = sc.target
		}
		done, err = r.deleteTarget(ctx, es, whole)
		what = "deleted Secret " + es.TargetName()
	} else {
		done, err = r.removeKeys(ctx, es, sc.target)
		what = "removed the keys of Secret " + es.TargetName()
	}
	if err != nil {
		return err
	}
	if done {
		r.Recorder.Event(es, corev1.EventTypeNormal, esv1.ReasonSecretDeleted, what+": its remote secrets are gone")
	}
	setDeleted(es, done, stamp)
	return nil
}

// applyData writes out to the target unless it holds it already, commits
// a rotation's generator states and records the sync.
func (r *Reconciler) applyData(ctx context.Context, sc *syncScope, out *secrettemplate.Result, outHash string, unchanged bool, stamp metav1.Time) error {
	es, target := sc.es, sc.target
	wrote := false
	if !unchanged {
		var err error
		if wrote, err = r.writeTarget(ctx, es, target, out); err != nil {
			return err
		}
		r.noteRendered(es, outHash)
	}
	if sc.rotation != nil {
		// The states' deadlines are reconciled later if this fails: the
		// target lists what it holds.
		if err := r.Generation.Commit(ctx, es, sc.rotation, generation.TargetStates(target)); err != nil {
			logr.FromContextOrDiscard(ctx).Error(err, "committing generator states")
		}
	}
	if wrote {
		logr.FromContextOrDiscard(ctx).V(1).Info("target Secret written", "secret", es.TargetName(), "keys", len(sc.fetched.data))
		r.Recorder.Event(es, corev1.EventTypeNormal, esv1.ReasonSecretSynced, "Secret "+es.TargetName()+" synced")
	}
	if err := r.deleteRenamed(ctx, es); err != nil {
		return err
	}
	setSynced(es, wrote, stamp)
	if note := sc.srcs.shadowNote(); note != "" {
		appendToMessages(es, "; "+note)
	}
	return nil
}
