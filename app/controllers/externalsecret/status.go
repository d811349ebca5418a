package externalsecret

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/outcomes"
)

// SyncedVersion is what status.syncedResourceVersion records: the spec
// generation and a digest of the labels and annotations the target reflects,
// as upstream ESO does, so that an annotation change (e.g. force-sync) resyncs.
func SyncedVersion(es *esv1.ExternalSecret) string {
	h := sha256.New()
	for _, m := range []map[string]string{es.Labels, es.Annotations} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(h, "%d:%s=%d:%s;", len(k), k, len(m[k]), m[k])
		}
		h.Write([]byte{0})
	}
	return strconv.FormatInt(es.Generation, 10) + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// setSynced records a successful sync. refreshTime moves only when the target
// was written, so a refresh that changes nothing leaves the status untouched.
func setSynced(es *esv1.ExternalSecret, wrote bool, now metav1.Time) {
	msg := "Secret " + es.TargetName() + " is in sync with the provider"
	if es.Spec.Target.CreationPolicy == esv1.CreatePolicyNone {
		msg = "provider read successfully; creationPolicy None writes no Secret"
	}
	setReady(es, metav1.ConditionTrue, esv1.ReasonSecretSynced, msg)
	es.Status.SyncedResourceVersion = SyncedVersion(es)
	if es.Spec.Target.CreationPolicy != esv1.CreatePolicyNone {
		es.Status.Binding.Name = es.TargetName()
	}
	if wrote || es.Status.RefreshTime.IsZero() {
		es.Status.RefreshTime = now
	}
}

// setDeleted records that the remote secrets are gone and what the deletion
// policy did about it: as upstream, a success (Ready=True), SecretDeleted
// under Delete (also for a new ExternalSecret whose keys never existed) and
// SecretSynced under Merge, whose Secret stays without the keys; Synced
// says SecretDeleted for both. refreshTime moves only when eso wrote now, so
// a deleted ExternalSecret costs no writes per refresh.
func setDeleted(es *esv1.ExternalSecret, wrote bool, now metav1.Time) {
	msg := "the remote secrets no longer exist, so Secret " + es.TargetName() + " is deleted (deletionPolicy Delete)"
	readyReason := esv1.ReasonSecretDeleted
	if es.Spec.Target.DeletionPolicy == esv1.DeletionPolicyMerge {
		msg = "the remote secrets no longer exist, so their keys are removed from Secret " + es.TargetName() + " (deletionPolicy Merge)"
		readyReason = esv1.ReasonSecretSynced
	}
	setOutcome(es, metav1.ConditionTrue, readyReason, esv1.ReasonSecretDeleted, msg)
	es.Status.SyncedResourceVersion = SyncedVersion(es)
	if wrote {
		es.Status.RefreshTime = now
	}
}

// setRetained records a find that matched nothing under deletionPolicy
// Retain: nothing to write and nothing to delete, a success as upstream.
func setRetained(es *esv1.ExternalSecret, now metav1.Time) {
	setReady(es, metav1.ConditionTrue, esv1.ReasonSecretSynced,
		"nothing matched; Secret "+es.TargetName()+" is left as it is (deletionPolicy Retain)")
	es.Status.SyncedResourceVersion = SyncedVersion(es)
	if es.Status.RefreshTime.IsZero() {
		es.Status.RefreshTime = now
	}
}

// setMissing records that a creationPolicy Merge target does not exist:
// nothing to merge into, which is no failure (upstream's SecretMissing).
// The ExternalSecret counts as not synced, so the target's arrival syncs it.
func setMissing(es *esv1.ExternalSecret) {
	setReady(es, metav1.ConditionTrue, esv1.ReasonSecretMissing,
		"Secret "+es.TargetName()+" does not exist: creationPolicy Merge writes into it once it does")
	es.Status.SyncedResourceVersion = ""
}

// setFailed records why a sync did not happen, and whether only an edit of
// the spec can end it (Stalled), and returns the failure's outcome, which
// also says when it is tried again. The target Secret is left as it was.
func setFailed(es *esv1.ExternalSecret, err error) outcomes.Outcome {
	out := outcome(err)
	setReady(es, metav1.ConditionFalse, out.ExternalSecretReason, err.Error())
	setStalled(es, out.Stalls, out.ExternalSecretReason, err.Error())
	return out
}

// setReady records an outcome twice: Synced with eso's reason, and Ready
// with upstream's (a reason upstream does not have reads SecretSyncedError
// there), so tools written for upstream read Ready unchanged.
func setReady(es *esv1.ExternalSecret, status metav1.ConditionStatus, reason, msg string) {
	setOutcome(es, status, upstreamReason(reason), reason, msg)
}

// appendToMessages adds a note to the messages of Ready and Synced.
func appendToMessages(es *esv1.ExternalSecret, note string) {
	for i := range es.Status.Conditions {
		if c := &es.Status.Conditions[i]; c.Type == esv1.ConditionReady || c.Type == esv1.ConditionSynced {
			c.Message += note
		}
	}
}

// setOutcome sets Ready and Synced with their own reasons. A success ends
// a stall; a failure's stall is setFailed's to decide.
func setOutcome(es *esv1.ExternalSecret, status metav1.ConditionStatus, readyReason, syncedReason, msg string) {
	for _, c := range []metav1.Condition{
		{Type: esv1.ConditionReady, Reason: readyReason},
		{Type: esv1.ConditionSynced, Reason: syncedReason},
	} {
		c.Status, c.Message, c.ObservedGeneration = status, msg, es.Generation
		meta.SetStatusCondition(&es.Status.Conditions, c)
	}
	if status == metav1.ConditionTrue {
		setStalled(es, false, "", "")
	}
}

// setStalled sets the Stalled condition: True, with the failure's reason and
// message and the generation it was seen at, when only an edit of the spec
// can end the failure (kstatus reads it as Failed, so a rollout waiting on
// the ExternalSecret fails now rather than at its timeout); otherwise no
// Stalled condition at all. Absent rather than False: kstatus reads both
// alike (only True counts), and absent is its convention for a condition
// of abnormal-true polarity, so an ExternalSecret that never stalled and
// one that did and recovered carry the same conditions. Unchanged, it
// changes nothing in the status, so a failure that stays costs no write.
func setStalled(es *esv1.ExternalSecret, stalled bool, reason, msg string) {
	if !stalled {
		meta.RemoveStatusCondition(&es.Status.Conditions, esv1.ConditionStalled)
		return
	}
	meta.SetStatusCondition(&es.Status.Conditions, metav1.Condition{
		Type: esv1.ConditionStalled, Status: metav1.ConditionTrue, Reason: reason, Message: msg, ObservedGeneration: es.Generation,
	})
}

// observe sets status.observedGeneration, the generation the status
// describes, on a status that is written: whatever changed in it (an
// outcome, an acknowledgment) was decided at this generation, and every
// outcome and acknowledgment moves the conditions' observedGeneration to
// it, so an edit the status does not yet describe always comes with a
// change. A status that changes in nothing else is not written for this
// field alone: a refresh that changes nothing still writes nothing, a
// status an earlier eso wrote without it gains it with its next change
// (kstatus checks no absent field), and a cache that does not yet show
// eso's own last write is no reason to write it again.
func observe(es *esv1.ExternalSecret, before *esv1.ExternalSecretStatus) {
	if equality.Semantic.DeepEqual(*before, es.Status) {
		return
	}
	es.Status.ObservedGeneration = es.Generation
}

// acknowledge records that eso has looked at the ExternalSecret's
// generation and has nothing to do for it: an edit its refresh policy does
// not act on (refreshPolicy CreatedOnce, or refreshInterval 0, which write
// the Secret once and never update it) leaves a healthy ExternalSecret
// healthy, so its conditions move to the generation (and observe moves
// status.observedGeneration with them), and kstatus reads it as Current,
// Argo CD as Healthy, rather than waiting for a sync that never comes. A
// status that is not Ready is no news to acknowledge: it stays as the last
// attempt left it until the next one. Already at the generation, it
// changes nothing.
func acknowledge(es *esv1.ExternalSecret) {
	if c := readyCondition(es); c == nil || c.Status != metav1.ConditionTrue {
		return
	}
	for i := range es.Status.Conditions {
		es.Status.Conditions[i].ObservedGeneration = es.Generation
	}
}

// upstreamReason is reason in upstream's vocabulary for Ready.
func upstreamReason(reason string) string {
	switch reason {
	case esv1.ReasonSecretSynced, esv1.ReasonSecretDeleted, esv1.ReasonSecretMissing, esv1.ReasonSecretSyncedError:
		return reason
	}
	return esv1.ReasonSecretSyncedError
}

// outcome is what eso says and does when a sync fails with err: the
// ExternalSecret's own failures (its target, its spec as only this
// controller reads it) here, everything else as the outcomes table says.
// The reason of Ready and Synced, the retry and the stall of every failure
// are decided here and nowhere else.
func outcome(err error) outcomes.Outcome {
	// failed is the reason of the failures below that have none of their own.
	const failed = esv1.ReasonSecretSyncedError
	switch {
	case apierrors.IsInvalid(err), errors.Is(err, errInvalidTarget):
		// The API server refused what eso would write: retrying sends the
		// same, but what it refused may come from the provider's values.
		return outcomes.Outcome{ExternalSecretReason: failed, SyncRetry: outcomes.Wait}
	case errors.Is(err, errTargetConflict):
		// The Secret that would fix it is not watched until eso manages it.
		return outcomes.Outcome{ExternalSecretReason: esv1.ReasonTargetConflict, SyncRetry: outcomes.Backoff}
	case errors.Is(err, errTargetImmutable):
		// Whoever made the Secret immutable may delete it.
		return outcomes.Outcome{ExternalSecretReason: esv1.ReasonTargetImmutable, SyncRetry: outcomes.Wait}
	case errors.Is(err, errBadValue), errors.Is(err, errBadRewrite) && !errors.Is(err, errInvalidRewrite):
		// What the provider returned does not fit (a value that does not
		// decode, keys a rewrite makes collide); it may change.
		return outcomes.Outcome{ExternalSecretReason: failed, SyncRetry: outcomes.Wait}
	case errors.Is(err, errNoStore):
		return outcomes.Outcome{ExternalSecretReason: esv1.ReasonStoreNotFound, SyncRetry: outcomes.Wait, Stalls: true}
	case errors.Is(err, errInvalidRewrite), errors.Is(err, errBadSyncWindow):
		// A rule or schedule that does not compile, whatever it meets.
		return outcomes.Outcome{ExternalSecretReason: failed, SyncRetry: outcomes.Wait, Stalls: true}
	}
	return outcomes.Of(err)
}

func readyCondition(es *esv1.ExternalSecret) *metav1.Condition {
	return meta.FindStatusCondition(es.Status.Conditions, esv1.ConditionReady)
}

// syncedCondition carries eso's own reason for the last outcome.
func syncedCondition(es *esv1.ExternalSecret) *metav1.Condition {
	return meta.FindStatusCondition(es.Status.Conditions, esv1.ConditionSynced)
}
