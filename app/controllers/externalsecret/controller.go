// Package externalsecret reconciles ExternalSecrets: it reads the referenced
// secrets through the ExternalSecret's store and writes them into the target
// Secret, only when something changed.
package externalsecret

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/generation"
	"github.com/eso-dev/eso/app/metrics"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/referents"
	"github.com/eso-dev/eso/app/refresh"
	"github.com/eso-dev/eso/app/statuswrite"
	"github.com/eso-dev/eso/app/steps"
	"github.com/eso-dev/eso/app/stores"
)

// Reconciler syncs ExternalSecrets.
type Reconciler struct {
	// Client reads through the manager's cache (which holds only managed
	// Secrets) and writes to the API server.
	Client client.Client
	// APIReader reads Secrets whole, from the API server, and those eso
	// does not manage yet.
	APIReader client.Reader
	// SecretMetadata reads the metadata of the Secrets labelled as eso's:
	// the manager's cache, which holds them as metadata only. nil: Client.
	SecretMetadata client.Reader
	Resolver       *stores.Resolver
	// Generation runs the generators of dataFrom entries and keeps their
	// GeneratorStates.
	Generation *generation.Runner
	Recorder   record.EventRecorder
	Scheduler  *refresh.Scheduler
	// Awaits re-queues an ExternalSecret when the object its failure names
	// (a template's ConfigMap) arrives; nil checks again at the recheck only.
	Awaits *referents.Queue
	// Now is the clock; tests may replace it.
	Now func() time.Time

	// synced remembers, per ExternalSecret, its last successful sync: when,
	// which generation, through which store fingerprint. It decides whether a
	// reconcile needs the provider at all. Lost on restart, when the status
	// stands in for it.
	synced sync.Map // types.NamespacedName -> syncRecord
	// repaired remembers when each target was last repaired (deleted or
	// edited behind eso's back), to pace repairs.
	repaired sync.Map // types.NamespacedName -> time.Time
	// verified remembers, per ExternalSecret, the version of its target
	// this process wrote or read whole and found holding what eso wrote
	// (targetRecord): a target still at that version in the cache needs
	// no read from the API server. Lost on restart, when each target is
	// read once.
	verified sync.Map // types.NamespacedName -> verifiedTarget
	// writes holds, per ExternalSecret, the write of its target in flight
	// (targetWrite), so that its watch event arriving before the write
	// returns is not taken for someone else's change (echo.go).
	writes sync.Map // types.NamespacedName -> *targetWrite
	// gained remembers, with --shards auto, when this replica started
	// working each namespace it took over: an ExternalSecret there whose
	// last refresh is older refreshes at once, so a remote change made
	// while the namespace moved between replicas is not left to the next
	// refresh. A restart of a lone replica refreshes nothing: its status
	// stands in.
	gained sync.Map // types.NamespacedName{Namespace} -> time.Time
	// statusWrites holds this controller's status writes its cache may not
	// show yet (statuswrite.Recent).
	statusWrites statuswrite.Recent
}

type syncRecord struct {
	at time.Time
	// uid and version tell a recreated or edited ExternalSecret from the one synced.
	uid         types.UID
	version     string
	fingerprint string
}

// Reconcile loads the ExternalSecret and runs the steps of a sync on it
// (steps.go). A step's error is recorded in one place, fail; a step may end
// the sync early, when nothing is due or the sync is already complete.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	start, due := time.Now(), false
	defer func() { metrics.Since(start, due) }()
	var es esv1.ExternalSecret
	if err := r.statusWrites.Get(ctx, r.Client, req.NamespacedName, &es); err != nil {
		if apierrors.IsNotFound(err) {
			r.synced.Delete(req.NamespacedName)
			r.repaired.Delete(req.NamespacedName)
			r.verified.Delete(req.NamespacedName)
			metrics.ExternalSecrets.Forget(req.Name, req.Namespace)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !es.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	sc := &syncScope{es: &es, before: es.Status.DeepCopy(), now: r.Now()}
	defer func() { due = sc.due }()
	defer sc.release()
	end, err := steps.Run(ctx, sc, r.steps()...)
	var unrecorded unrecordedError
	switch {
	case errors.As(err, &unrecorded):
		return ctrl.Result{}, unrecorded.err
	case err != nil:
		if note := sc.srcs.shadowNote(); note != "" {
			// Which store a failing sync used matters most when two could be meant.
			err = fmt.Errorf("%w; %s", err, note)
		}
		return r.fail(ctx, sc.es, sc.before, err)
	case end == endQuietly:
		return ctrl.Result{}, nil
	case end == endUntil:
		// Nothing is due, but an edit nothing acts on is acknowledged.
		if err := r.writeStatus(ctx, sc.es, sc.before, nil); err != nil {
			return ctrl.Result{}, err
		}
		r.schedule(req.NamespacedName, sc.wait)
		return ctrl.Result{}, nil
	case end == endWaiting:
		r.synced.Delete(req.NamespacedName)
		if err := r.writeStatus(ctx, sc.es, sc.before, &r.statusWrites); err != nil {
			return ctrl.Result{}, err
		}
		r.Awaits.Await(sc.awaiting, req)
		r.schedule(req.NamespacedName, sc.wait)
		return ctrl.Result{}, nil
	}
	// endSynced, or every step ran.
	return r.finish(ctx, sc.es, sc.before, sc.record())
}

// finish records a successful sync (in memory and in the status) and
// schedules the next refresh.
func (r *Reconciler) finish(ctx context.Context, es *esv1.ExternalSecret, before *esv1.ExternalSecretStatus, rec syncRecord) (ctrl.Result, error) {
	key := types.NamespacedName{Namespace: es.Namespace, Name: es.Name}
	if prev := readyCondition(&esv1.ExternalSecret{Status: *before}); prev != nil && prev.Status != metav1.ConditionTrue {
		logr.FromContextOrDiscard(ctx).Info("ExternalSecret is ready again", "reason", readyCondition(es).Reason)
	}
	// Remembered only once the status says so: a failed status write must
	// not leave this process believing a sync the status does not show.
	// A rotation's intent is read from status.refreshTime (generation.Intent),
	// so a generating ExternalSecret's next reconcile must see this write:
	// from an older copy, a force-sync would take the rotation just written
	// for one it is due and generate nothing.
	var recent *statuswrite.Recent
	if generation.HasGenerators(es) {
		recent = &r.statusWrites
	}
	if err := r.writeStatus(ctx, es, before, recent); err != nil {
		return ctrl.Result{}, err
	}
	r.synced.Store(key, rec)
	if interval := refreshInterval(es); interval > 0 {
		// A sync that took longer than the interval (a provider retrying
		// through an outage) is due again at once: never unscheduled.
		r.schedule(key, max(interval-r.Now().Sub(rec.at)+jitter(es, interval), time.Millisecond))
	}
	return ctrl.Result{}, nil
}

// syncDue decides whether the provider must be read now, in upstream's
// order: first the refresh policy (refreshDue); when it asks for nothing, a
// target deleted or edited behind eso's back is repaired (valid: see
// targetValid). If
// nothing is due it returns how long until the next refresh (0: none
// scheduled). refreshOnly is set when the only reason is the periodic
// refresh, which sync windows may defer.
func (r *Reconciler) syncDue(es *esv1.ExternalSecret, valid bool, fingerprint string, now time.Time) (due bool, wait time.Duration, refreshOnly bool) {
	due, wait, refreshOnly = r.refreshDue(es, fingerprint, now)
	if !due && !valid {
		// Repairs are paced: another controller that keeps undoing what eso
		// writes (or two ExternalSecrets writing one key) meets a repair
		// every minRepairGap, not a loop at API speed.
		key := types.NamespacedName{Namespace: es.Namespace, Name: es.Name}
		if v, ok := r.repaired.Load(key); ok {
			if since := now.Sub(v.(time.Time)); since < minRepairGap {
				return false, minRepairGap - since, false
			}
		}
		r.repaired.Store(key, now)
		return true, 0, false
	}
	return due, wait, refreshOnly
}

// minRepairGap is the least time between two repairs of one target.
const minRepairGap = 10 * time.Second

// refreshDue is the refresh policy's answer. Never synced: now. Synced
// once: CreatedOnce never again; Periodic with refreshInterval 0 never
// again either, whatever changed since (upstream: "create the secret once
// and not update it afterward", so an annotation added by a GitOps tool
// does not rotate a generated password); OnChange and Periodic when the
// ExternalSecret, its labels or annotations, or its store changed, and
// after a failed attempt; Periodic also when the interval has passed. What
// this process synced is remembered, so a status not yet back in the cache
// does not cause a second read; after a restart the status stands in.
func (r *Reconciler) refreshDue(es *esv1.ExternalSecret, fingerprint string, now time.Time) (due bool, wait time.Duration, refreshOnly bool) {
	rec, remembered := r.lastSync(es)
	if !remembered && es.Status.SyncedResourceVersion == "" {
		return true, 0, false // never synced
	}
	interval := refreshInterval(es)
	switch {
	case es.Spec.RefreshPolicy == esv1.RefreshPolicyCreatedOnce:
		return false, 0, false
	case es.Spec.RefreshPolicy != esv1.RefreshPolicyOnChange && interval <= 0:
		return false, 0, false
	}
	last := rec.at
	if remembered {
		if rec.version != SyncedVersion(es) || rec.fingerprint != fingerprint {
			return true, 0, false // edited, or store or provider configuration changed
		}
	} else {
		if es.Status.SyncedResourceVersion != SyncedVersion(es) {
			return true, 0, false // edited
		}
		if ready := readyCondition(es); ready == nil || ready.Status != metav1.ConditionTrue {
			return true, 0, false // last attempt failed
		}
		last = es.Status.RefreshTime.Time
		if at, ok := r.gained.Load(types.NamespacedName{Namespace: es.Namespace}); ok && interval > 0 && last.Before(at.(time.Time)) {
			return true, 0, true // refreshed before this replica took its namespace over
		}
	}
	if interval <= 0 {
		return false, 0, false // OnChange
	}
	if wait := last.Add(interval).Sub(now); wait > 0 {
		return false, wait + jitter(es, interval), false
	}
	return true, 0, true
}

// tookOver records when this replica starts working namespaces
// (manager.OnGain), for refreshDue.
func (r *Reconciler) tookOver(namespaces []string) {
	now := r.Now()
	for _, ns := range namespaces {
		r.gained.Store(types.NamespacedName{Namespace: ns}, now)
	}
}

// lastSync is this process's record of the ExternalSecret's last success.
func (r *Reconciler) lastSync(es *esv1.ExternalSecret) (syncRecord, bool) {
	if v, ok := r.synced.Load(types.NamespacedName{Namespace: es.Namespace, Name: es.Name}); ok && v.(syncRecord).uid == es.UID {
		return v.(syncRecord), true
	}
	return syncRecord{}, false
}

// jitter spreads the refreshes of objects created together over up to a
// tenth of their interval (at most a minute), so thousands of ExternalSecrets
// do not reach their providers in lockstep. It is fixed per object, so an
// object's own refreshes stay evenly spaced.
func jitter(es *esv1.ExternalSecret, interval time.Duration) time.Duration {
	span := min(interval/10, time.Minute)
	if span <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(es.UID))
	return time.Duration(h.Sum64() % uint64(span))
}

// fail records err on the ExternalSecret and decides how to retry: errors that
// may pass by themselves back off; the others wait for a change, with a
// low-priority retry at the refresh interval as a safety net, except a
// stall: only an edit ends it, and an edit is watched.
func (r *Reconciler) fail(ctx context.Context, es *esv1.ExternalSecret, before *esv1.ExternalSecretStatus, cause error) (ctrl.Result, error) {
	if apierrors.IsConflict(cause) {
		// Our cached copy was stale; retry with a fresh one, nothing to report.
		return ctrl.Result{}, cause
	}
	// Forget the last success: the next reconcile must read the provider again.
	r.synced.Delete(types.NamespacedName{Namespace: es.Namespace, Name: es.Name})
	metrics.SyncErrors.Inc(es.Name, es.Namespace)
	// Events and logs carry eso's own reason; Ready carries upstream's.
	prev := syncedCondition(&esv1.ExternalSecret{Status: *before})
	out := setFailed(es, cause)
	cur := syncedCondition(es)
	if prev == nil || prev.Reason != cur.Reason || prev.Message != cur.Message {
		r.Recorder.Event(es, corev1.EventTypeWarning, cur.Reason, cur.Message)
	}
	if prev == nil || prev.Status != cur.Status || prev.Reason != cur.Reason {
		// One line per change of state, not per retry (those are at debug).
		logr.FromContextOrDiscard(ctx).Info("ExternalSecret is not ready", "reason", cur.Reason, "message", cur.Message)
	}
	if err := r.writeStatus(ctx, es, before, &r.statusWrites); err != nil {
		return ctrl.Result{}, errors.Join(cause, err)
	}
	switch {
	case out.Stalls:
		return ctrl.Result{}, nil
	case out.SyncRetry == outcomes.Backoff:
		return ctrl.Result{}, cause
	case out.SyncRetry == outcomes.Recheck:
		// What would fix it is not watched (a Secret or ConfigMap not there
		// yet): look again soon, at a steady pace rather than a growing
		// backoff.
		key := types.NamespacedName{Namespace: es.Namespace, Name: es.Name}
		r.schedule(key, outcomes.RecheckInterval)
		r.Awaits.Await(cause, reconcile.Request{NamespacedName: key})
		return ctrl.Result{}, nil
	}
	interval := refreshInterval(es)
	if interval <= 0 {
		interval = defaultRetryInterval
	}
	r.schedule(types.NamespacedName{Namespace: es.Namespace, Name: es.Name}, interval)
	return ctrl.Result{}, nil
}

// defaultRetryInterval retries non-transient failures of ExternalSecrets that
// never refresh.
const defaultRetryInterval = 5 * time.Minute

// writeStatus patches the status only when it changed, with the
// generation it describes.
//
// recent, when set, remembers the write until the cache shows it: after a
// failure or a wait, the next reconcile has no sync record and decides from
// the status, so it must not read a copy older than this write. After a
// success the record decides, except for a generating ExternalSecret's
// rotation intent (finish); remembering every write would cost a read from
// the API server whenever the target's watch event outran the status's.
func (r *Reconciler) writeStatus(ctx context.Context, es *esv1.ExternalSecret, before *esv1.ExternalSecretStatus, recent *statuswrite.Recent) error {
	observe(es, before)
	metrics.ExternalSecrets.SetConditions(es.Status.Conditions, es.Name, es.Namespace)
	if meta.FindStatusCondition(es.Status.Conditions, esv1.ConditionStalled) == nil {
		// No stall (or one that ended) leaves no condition, so no series either.
		metrics.ExternalSecrets.ForgetCondition(esv1.ConditionStalled, es.Name, es.Namespace)
	}
	_, err := statuswrite.IfChanged(ctx, r.Client, recent, es, *before, externalSecretStatus, "ExternalSecret")
	return err
}

func externalSecretStatus(o client.Object) *esv1.ExternalSecretStatus {
	return &o.(*esv1.ExternalSecret).Status
}

func (r *Reconciler) schedule(key types.NamespacedName, after time.Duration) {
	if after > 0 {
		r.Scheduler.After(ctrl.Request{NamespacedName: key}, after)
	}
}

// refreshInterval is how often the ExternalSecret reads its provider again;
// 0 means never (refreshPolicy OnChange or CreatedOnce, or an interval of 0).
func refreshInterval(es *esv1.ExternalSecret) time.Duration {
	switch {
	case es.Spec.RefreshPolicy == esv1.RefreshPolicyOnChange, es.Spec.RefreshPolicy == esv1.RefreshPolicyCreatedOnce:
		return 0
	case es.Spec.RefreshInterval == nil:
		return time.Hour
	default:
		return es.Spec.RefreshInterval.Duration
	}
}
