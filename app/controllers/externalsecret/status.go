package externalsecret

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/apis/lenient"
	"github.com/eso-dev/eso/app/grpcclient"
	"github.com/eso-dev/eso/app/secrettemplate"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers"
)

// syncedVersion is what status.syncedResourceVersion records: the spec
// generation and a digest of the labels and annotations the target reflects,
// as upstream ESO does, so that an annotation change (e.g. force-sync) resyncs.
func syncedVersion(es *esv1.ExternalSecret) string {
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
	es.Status.SyncedResourceVersion = syncedVersion(es)
	if es.Spec.Target.CreationPolicy != esv1.CreatePolicyNone {
		es.Status.Binding.Name = es.TargetName()
	}
	if wrote || es.Status.RefreshTime.IsZero() {
		es.Status.RefreshTime = now
	}
}

// setDeleted records that the remote secrets are gone and what the deletion
// policy did about it. refreshTime moves only when eso wrote now, so a deleted
// ExternalSecret costs no writes per refresh.
func setDeleted(es *esv1.ExternalSecret, wrote bool, now metav1.Time) {
	msg := "the remote secrets no longer exist, so Secret " + es.TargetName() + " is deleted (deletionPolicy Delete)"
	if es.Spec.Target.DeletionPolicy == esv1.DeletionPolicyMerge {
		msg = "the remote secrets no longer exist, so their keys are removed from Secret " + es.TargetName() + " (deletionPolicy Merge)"
	}
	setReady(es, metav1.ConditionFalse, esv1.ReasonSecretDeleted, msg)
	es.Status.SyncedResourceVersion = syncedVersion(es)
	if wrote {
		es.Status.RefreshTime = now
	}
}

// setFailed records why a sync did not happen. The target Secret is left as it was.
func setFailed(es *esv1.ExternalSecret, err error) {
	setReady(es, metav1.ConditionFalse, failureReason(err), err.Error())
}

func setReady(es *esv1.ExternalSecret, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&es.Status.Conditions, metav1.Condition{
		Type:               esv1.ConditionReady,
		Status:             status,
		Reason:             reason,
		Message:            msg,
		ObservedGeneration: es.Generation,
	})
}

// failureReason maps an error to the Ready condition's reason.
func failureReason(err error) string {
	switch {
	case errors.Is(err, lenient.ErrUndecodable):
		return esv1.ReasonInvalidSpec
	case errors.Is(err, stores.ErrStoreNotFound):
		return esv1.ReasonStoreNotFound
	case errors.Is(err, stores.ErrStoreNotReady):
		return esv1.ReasonStoreNotReady
	case errors.Is(err, stores.ErrNotAllowed), errors.Is(err, providers.ErrOutOfScope), errors.Is(err, stores.ErrCrossNamespace):
		return esv1.ReasonStoreNotAllowed
	case errors.Is(err, stores.ErrUnsupportedVersion), errors.Is(err, stores.ErrNotCompiledIn), errors.Is(err, stores.ErrRemoteNotEnabled),
		errors.Is(err, grpcclient.ErrIncompatibleProvider), errors.Is(err, grpcclient.ErrKindNotServed):
		return esv1.ReasonUnsupportedStore
	case errors.Is(err, providers.ErrSecretNotFound), errors.Is(err, providers.ErrPropertyNotFound):
		return esv1.ReasonSecretNotFound
	case errors.Is(err, errTargetMissing):
		return esv1.ReasonTargetMissing
	case errors.Is(err, errTargetConflict):
		return esv1.ReasonTargetConflict
	case errors.Is(err, errTargetImmutable):
		return esv1.ReasonTargetImmutable
	case errors.Is(err, errNoStore):
		return esv1.ReasonStoreNotFound
	case errors.Is(err, secrettemplate.ErrTemplate):
		return esv1.ReasonTemplateError
	case errors.Is(err, providers.ErrConfigNotFound), errors.Is(err, providers.ErrInvalidConfig), errors.Is(err, providers.ErrNotSupported):
		return esv1.ReasonProviderError
	default:
		return esv1.ReasonSecretSyncedError
	}
}

// retryable reports whether an error may go away by itself (network, API
// server, provider hiccups) and is worth retrying with backoff. The others wait
// for a change (of the ExternalSecret, store, configuration or Secret) or the
// next refresh.
func retryable(err error) bool {
	if apierrors.IsInvalid(err) || errors.Is(err, errInvalidTarget) {
		return false // the API server refused what eso would write; retrying sends the same
	}
	switch failureReason(err) {
	case esv1.ReasonTargetConflict, esv1.ReasonTargetMissing:
		return true // the Secret that would fix it is not watched until eso manages it
	case esv1.ReasonSecretSyncedError, esv1.ReasonProviderError:
		return !errors.Is(err, providers.ErrConfigNotFound) && !errors.Is(err, providers.ErrInvalidConfig) &&
			!errors.Is(err, providers.ErrNotSupported) && !errors.Is(err, errBadValue) && !errors.Is(err, errBadRewrite) &&
			!errors.Is(err, errBadSyncWindow)
	default:
		return false
	}
}

func readyCondition(es *esv1.ExternalSecret) *metav1.Condition {
	return meta.FindStatusCondition(es.Status.Conditions, esv1.ConditionReady)
}
