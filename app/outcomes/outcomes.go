// Package outcomes is the one table from what went wrong to what eso says
// and does about it: the Ready reason of a store or generator and of an
// ExternalSecret, whether and when to try again, whether only an edit of
// the failing object can end the failure (it stalls), and whether the cached
// provider client is dropped. Every controller reads it; the error's class
// (plugin.Class) is what the gRPC wire carries and metrics count.
package outcomes

import (
	"errors"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/apis/lenient"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/secrettemplate"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// Retry is when an object that failed is tried again.
type Retry int

const (
	// Wait: only when something it depends on changes (it is watched):
	// retrying sends the same request and gets the same answer.
	Wait Retry = iota
	// Backoff: with exponential backoff; the failure may pass by itself.
	Backoff
	// Recheck: after RecheckInterval, since what would fix it is not in
	// eso's caches (credential Secrets, template sources). When the error
	// names the object (plugin.Awaiting), a watch on it re-queues the
	// waiter sooner (app/referents).
	Recheck
)

// RecheckInterval is how soon a Recheck outcome is tried again.
const RecheckInterval = 30 * time.Second

// MaxBackoff caps the backoff of a Backoff outcome. controller-runtime's
// default cap (1000 s) would leave an object that failed through a long
// outage untried for up to 17 minutes after its provider came back; with
// this cap an object is tried again within MaxBackoff (or, when N objects
// fail at once, within N/10 s: the overall pace below), and a provider
// that stays down is asked at most once per object per MaxBackoff.
const MaxBackoff = 2 * time.Minute

// RetryLimiter is the rate limiter of the controllers that follow this
// table: per object, exponential from 5 ms to MaxBackoff; overall, the
// default 10 per second with bursts of 100.
func RetryLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, MaxBackoff),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// Outcome is what eso says and does about one failure. (The error's class,
// which metrics and the wire carry, is plugin.ClassOf.)
type Outcome struct {
	// StoreReason is the Ready reason of a store or generator that fails
	// validation with the error; empty for failures only syncs meet (see
	// ForStore). StoreRetry is when it is validated again.
	StoreReason string
	StoreRetry  Retry
	// ExternalSecretReason is the Ready reason of an ExternalSecret whose
	// sync fails with the error; SyncRetry is when it is tried again.
	ExternalSecretReason string
	SyncRetry            Retry
	// Stalls: only an edit of the failing object's own spec can end the
	// failure. Retrying cannot, and neither can anything that may change
	// by itself or by another's hand: an object that does not exist yet
	// (eso converges in any order of apply), a provider, a store, eso's
	// configuration or an admin's labels. An ExternalSecret says so with
	// Stalled=True, which kstatus (Flux, kpt) reads as Failed rather than
	// waiting for its timeout. When in doubt a row does not stall: a wrong
	// stall fails a rollout that would have converged.
	Stalls bool
	// DropClient: the cached provider client is dropped, so the next
	// attempt logs in (or connects) afresh.
	DropClient bool
}

// table is read top down: the first row whose error err wraps decides.
var table = []struct {
	err error
	out Outcome
}{
	// The object itself, and the store or generator it names.
	{lenient.ErrUndecodable, Outcome{StoreReason: ssv2.ReasonInvalidSpec, ExternalSecretReason: esv1.ReasonInvalidSpec, Stalls: true}},
	{stores.ErrStoreNotFound, Outcome{ExternalSecretReason: esv1.ReasonStoreNotFound}},
	{stores.ErrStoreNotReady, Outcome{ExternalSecretReason: esv1.ReasonStoreNotReady}},
	{stores.ErrNotAllowed, Outcome{ExternalSecretReason: esv1.ReasonStoreNotAllowed}},
	{stores.ErrCrossNamespace, Outcome{StoreReason: ssv2.ReasonCrossNamespaceRefused, ExternalSecretReason: esv1.ReasonStoreNotAllowed}},
	// A kind this binary lacks (often the store's or the Generator's), an
	// apiVersion eso serves but this build lacks (external-secrets.io/v1
	// without the v1 layer: also ErrUnsupportedVersion, so this row comes
	// first), or provider processes this eso is not set up for: another
	// build or configuration of eso serves them, with no edit of the object.
	{stores.ErrNotCompiledIn, Outcome{StoreReason: ssv2.ReasonProviderNotCompiledIn, ExternalSecretReason: esv1.ReasonUnsupportedStore}},
	{stores.ErrRemoteNotEnabled, Outcome{StoreReason: ssv2.ReasonRemoteProviderNotEnabled, ExternalSecretReason: esv1.ReasonUnsupportedStore}},
	// A configuration in a namespace this eso does not watch: retrying
	// cannot read it; an edit of the store or eso's --namespace can.
	{stores.ErrNamespaceNotWatched, Outcome{StoreReason: ssv2.ReasonInvalidProviderConfig, ExternalSecretReason: esv1.ReasonProviderError}},
	// An apiVersion (or a generator kind of one) no eso serves, named by
	// the object itself.
	{stores.ErrUnsupportedVersion, Outcome{ExternalSecretReason: esv1.ReasonUnsupportedStore, Stalls: true}},
	// Templates that ran past their time bound may fit on a less busy CPU:
	// tried again at the recheck's steady pace, not left until the next
	// refresh, nor retried at once onto the CPU that was too busy.
	{secrettemplate.ErrRenderTime, Outcome{ExternalSecretReason: esv1.ReasonTemplateError, SyncRetry: Recheck}},
	{secrettemplate.ErrSourceNotFound, Outcome{ExternalSecretReason: esv1.ReasonTemplateError, SyncRetry: Recheck}},
	{secrettemplate.ErrInvalidTemplate, Outcome{ExternalSecretReason: esv1.ReasonTemplateError, Stalls: true}},
	// A template that failed on the values it met, or a templateFrom
	// source's: either may change.
	{secrettemplate.ErrTemplate, Outcome{ExternalSecretReason: esv1.ReasonTemplateError}},

	// The provider contract's classes.
	{plugin.ErrPropertyNotFound, Outcome{ExternalSecretReason: esv1.ReasonSecretNotFound}},
	{plugin.ErrSecretNotFound, Outcome{ExternalSecretReason: esv1.ReasonSecretNotFound}},
	{plugin.ErrCredentialsNotFound, Outcome{StoreReason: ssv2.ReasonInvalidProviderConfig, StoreRetry: Recheck,
		ExternalSecretReason: esv1.ReasonProviderError, SyncRetry: Recheck}},
	{plugin.ErrConfigNotFound, Outcome{StoreReason: ssv2.ReasonProviderRefNotFound, ExternalSecretReason: esv1.ReasonProviderError}},
	{plugin.ErrInvalidConfig, Outcome{StoreReason: ssv2.ReasonInvalidProviderConfig, ExternalSecretReason: esv1.ReasonProviderError}},
	{plugin.ErrNotSupported, Outcome{StoreReason: ssv2.ReasonInvalidProviderConfig, ExternalSecretReason: esv1.ReasonProviderError}},
	// A store rechecks refused credentials (the Secret holding them is not
	// watched); a sync retries at once with backoff, logging in afresh.
	{plugin.ErrAuthFailed, Outcome{StoreReason: ssv2.ReasonAuthenticationFailed, StoreRetry: Recheck,
		ExternalSecretReason: esv1.ReasonSecretSyncedError, SyncRetry: Backoff, DropClient: true}},
	{plugin.ErrOutOfScope, Outcome{StoreReason: ssv2.ReasonCrossNamespaceRefused, ExternalSecretReason: esv1.ReasonStoreNotAllowed,
		DropClient: true}},
	{plugin.ErrNotManaged, Outcome{ExternalSecretReason: esv1.ReasonSecretSyncedError}},
	{plugin.ErrIncompatible, Outcome{StoreReason: ssv2.ReasonIncompatibleProvider, ExternalSecretReason: esv1.ReasonUnsupportedStore,
		DropClient: true}},
}

// transient is the outcome of everything else: throttling, the provider or
// the API server unreachable, any error without a class.
var transient = Outcome{StoreReason: ssv2.ReasonValidationFailed, StoreRetry: Backoff,
	ExternalSecretReason: esv1.ReasonSecretSyncedError, SyncRetry: Backoff}

// ForStore is o as a store or generator sees it: a failure that names no
// store reason (one of an ExternalSecret's own, which validation does not
// meet) counts as a validation that could not finish, retried with backoff.
func (o Outcome) ForStore() Outcome {
	if o.StoreReason == "" {
		o.StoreReason, o.StoreRetry = ssv2.ReasonValidationFailed, Backoff
	}
	return o
}

// Of is the outcome of err, which must not be nil.
func Of(err error) Outcome {
	for _, row := range table {
		if errors.Is(err, row.err) {
			return row.out
		}
	}
	return transient
}

// Reasons lists, once each, every Ready reason the table gives a store or
// generator (store) and an ExternalSecret (externalSecret), so that what
// explains a reason to users can be checked to cover them all.
func Reasons() (store, externalSecret []string) {
	rows := []Outcome{transient}
	for _, row := range table {
		rows = append(rows, row.out)
	}
	storeSeen, esSeen := map[string]bool{}, map[string]bool{}
	for _, o := range rows {
		if r := o.ForStore().StoreReason; !storeSeen[r] {
			storeSeen[r] = true
			store = append(store, r)
		}
		if r := o.ExternalSecretReason; !esSeen[r] {
			esSeen[r] = true
			externalSecret = append(externalSecret, r)
		}
	}
	return store, externalSecret
}
