package outcomes

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/apis/lenient"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/grpcclient"
	"github.com/eso-dev/eso/app/secrettemplate"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/plugin/wire"
)

// TestOutcomes: what eso says and does for the failures people meet,
// however deeply the error is wrapped.
func TestOutcomes(t *testing.T) {
	cases := []struct {
		err       error
		store, es string
		// retry is the store's, syncRetry the ExternalSecret's.
		retry      Retry
		dropClient bool
		class      plugin.Class
		syncRetry  Retry
	}{
		{plugin.ErrAuthFailed, ssv2.ReasonAuthenticationFailed, esv1.ReasonSecretSyncedError, Recheck, true, plugin.ClassAuthFailed, Backoff},
		{plugin.ErrOutOfScope, ssv2.ReasonCrossNamespaceRefused, esv1.ReasonStoreNotAllowed, Wait, true, plugin.ClassOutOfScope, Wait},
		{plugin.ErrInvalidConfig, ssv2.ReasonInvalidProviderConfig, esv1.ReasonProviderError, Wait, false, plugin.ClassInvalidConfig, Wait},
		{plugin.ErrNoAmbientCredentials, ssv2.ReasonInvalidProviderConfig, esv1.ReasonProviderError, Wait, false, plugin.ClassInvalidConfig, Wait},
		{plugin.ErrConfigNotFound, ssv2.ReasonProviderRefNotFound, esv1.ReasonProviderError, Wait, false, plugin.ClassConfigNotFound, Wait},
		{plugin.ErrTooLarge, ssv2.ReasonInvalidProviderConfig, esv1.ReasonProviderError, Wait, false, plugin.ClassTooLarge, Wait},
		{fmt.Errorf("%w: %w", plugin.ErrSecretNotFound, plugin.ErrPropertyNotFound), "", esv1.ReasonSecretNotFound, Wait, false, plugin.ClassPropertyNotFound, Wait},
		{grpcclient.ErrIncompatibleProvider, ssv2.ReasonIncompatibleProvider, esv1.ReasonUnsupportedStore, Wait, true, plugin.ClassIncompatible, Wait},
		{grpcclient.ErrKindNotServed, ssv2.ReasonIncompatibleProvider, esv1.ReasonUnsupportedStore, Wait, true, plugin.ClassIncompatible, Wait},
		{wire.ErrUnavailable, ssv2.ReasonValidationFailed, esv1.ReasonSecretSyncedError, Backoff, false, plugin.ClassUnavailable, Backoff},
		{plugin.ErrThrottled, ssv2.ReasonValidationFailed, esv1.ReasonSecretSyncedError, Backoff, false, plugin.ClassThrottled, Backoff},
		{errors.New("connection reset by peer"), ssv2.ReasonValidationFailed, esv1.ReasonSecretSyncedError, Backoff, false, plugin.ClassUnknown, Backoff},
		{stores.ErrNotCompiledIn, ssv2.ReasonProviderNotCompiledIn, esv1.ReasonUnsupportedStore, Wait, false, plugin.ClassUnknown, Wait},
		// external-secrets.io/v1 in a build without the v1 layer: another
		// build serves it, as for a kind not compiled in.
		{v1WithoutTheLayer(t), ssv2.ReasonProviderNotCompiledIn, esv1.ReasonUnsupportedStore, Wait, false, plugin.ClassUnknown, Wait},
		{stores.ErrStoreNotReady, "", esv1.ReasonStoreNotReady, Wait, false, plugin.ClassUnknown, Wait},
		// A render past its time bound may fit on a less busy CPU; past a
		// bound of work or bytes it cannot.
		{secrettemplate.ErrRenderTime, "", esv1.ReasonTemplateError, Wait, false, plugin.ClassUnknown, Recheck},
		{secrettemplate.ErrBudget, "", esv1.ReasonTemplateError, Wait, false, plugin.ClassUnknown, Wait},
	}
	for _, tc := range cases {
		err := fmt.Errorf("reading db: %w", tc.err)
		got := Of(err)
		want := Outcome{StoreReason: tc.store, StoreRetry: tc.retry, ExternalSecretReason: tc.es, SyncRetry: tc.syncRetry, DropClient: tc.dropClient}
		if got != want {
			t.Errorf("Of(%v) = %+v, want %+v", tc.err, got, want)
		}
		if class := plugin.ClassOf(err); class != tc.class {
			t.Errorf("ClassOf(%v) = %s, want %s", tc.err, class, tc.class)
		}
	}
}

// TestEveryRowIsReachable: no row hides behind an earlier one, so each
// says what happens to its error.
func TestEveryRowIsReachable(t *testing.T) {
	for _, row := range table {
		got := Of(fmt.Errorf("wrapped: %w", row.err))
		if got != row.out {
			t.Errorf("%v: an earlier row decides (%+v), not its own (%+v)", row.err, got, row.out)
		}
	}
}

// TestStalls: whether a row's failure stalls (only an edit of the failing
// object's spec ends it; an ExternalSecret says Stalled=True, which kstatus
// reads as Failed) is decided here for every row, so a row cannot be added
// without deciding. Nothing that may arrive later, pass, or change by
// another's hand stalls.
func TestStalls(t *testing.T) {
	stalls := map[error]bool{
		lenient.ErrUndecodable:            true, // a spec eso cannot decode
		stores.ErrUnsupportedVersion:      true, // an apiVersion the object names that eso does not serve
		secrettemplate.ErrInvalidTemplate: true, // a template the object holds that does not parse
		stores.ErrStoreNotFound:           false,
		stores.ErrStoreNotReady:           false,
		stores.ErrNotAllowed:              false, // an admin may relabel the namespace
		stores.ErrCrossNamespace:          false, // the store's spec, not the object's
		stores.ErrNotCompiledIn:           false, // another build of eso serves it
		stores.ErrRemoteNotEnabled:        false, // eso's configuration
		stores.ErrNamespaceNotWatched:     false, // eso's configuration, or the store's
		secrettemplate.ErrSourceNotFound:  false,
		secrettemplate.ErrTemplate:        false, // failed on the values, or a source's template
		secrettemplate.ErrRenderTime:      false, // a busy CPU
		plugin.ErrPropertyNotFound:        false,
		plugin.ErrSecretNotFound:          false,
		plugin.ErrCredentialsNotFound:     false,
		plugin.ErrConfigNotFound:          false,
		plugin.ErrInvalidConfig:           false,
		plugin.ErrNotSupported:            false,
		plugin.ErrAuthFailed:              false,
		plugin.ErrOutOfScope:              false,
		plugin.ErrNotManaged:              false,
		plugin.ErrIncompatible:            false,
	}
	for _, row := range table {
		want, ok := stalls[row.err]
		if !ok {
			t.Errorf("%v: decide whether it stalls, in its row and here", row.err)
			continue
		}
		if row.out.Stalls != want {
			t.Errorf("%v: Stalls = %v, want %v", row.err, row.out.Stalls, want)
		}
		if row.out.Stalls && row.out.SyncRetry != Wait {
			t.Errorf("%v stalls but is retried (%v): retrying cannot end a stall", row.err, row.out.SyncRetry)
		}
	}
	if Of(errors.New("connection reset by peer")).Stalls {
		t.Error("an unclassified failure stalls")
	}
	// An apiVersion no eso serves stalls; one this build lacks does not:
	// deploying another build ends it, not an edit.
	if !Of(fmt.Errorf("%w %q", stores.ErrUnsupportedVersion, "external-secrets.io/v1beta1")).Stalls {
		t.Error("an apiVersion no eso serves does not stall")
	}
	if err := v1WithoutTheLayer(t); Of(err).Stalls {
		t.Errorf("%v stalls", err)
	}
}

// v1WithoutTheLayer is the error of a store reference to
// external-secrets.io/v1 in a build without the v1 layer (tag nov1).
func v1WithoutTheLayer(t *testing.T) error {
	t.Helper()
	_, err := stores.NewResolver(nil, nil, nil, "").Get(context.Background(), "ns",
		esv1.SecretStoreRef{Name: "db", Kind: stores.KindSecretStore, APIVersion: stores.StoreAPIVersionV1})
	if !errors.Is(err, stores.ErrUnsupportedVersion) || !errors.Is(err, stores.ErrNotCompiledIn) {
		t.Fatalf("a v1 store reference without the v1 layer: %v", err)
	}
	return err
}

// TestForStore: a failure only syncs meet reads, for a store or generator,
// as a validation that could not finish: retried with backoff, never an
// empty reason.
func TestForStore(t *testing.T) {
	for _, err := range []error{plugin.ErrSecretNotFound, plugin.ErrNotManaged, stores.ErrStoreNotReady} {
		got := Of(err).ForStore()
		if got.StoreReason != ssv2.ReasonValidationFailed || got.StoreRetry != Backoff {
			t.Errorf("ForStore(%v) = %+v", err, got)
		}
	}
	if got := Of(plugin.ErrAuthFailed).ForStore(); got.StoreReason != ssv2.ReasonAuthenticationFailed || got.StoreRetry != Recheck {
		t.Errorf("a store reason of its own was replaced: %+v", got)
	}
}

// TestMissingCredentialsAreRechecked: a credentials Secret that does not
// exist yet is an invalid configuration that fixes itself when the Secret
// arrives, which eso does not watch: checked again soon, not left waiting.
func TestMissingCredentialsAreRechecked(t *testing.T) {
	err := fmt.Errorf("%w: credentials Secret team/vault-token not found", plugin.ErrCredentialsNotFound)
	got := Of(err)
	if got.StoreReason != ssv2.ReasonInvalidProviderConfig || got.StoreRetry != Recheck || got.SyncRetry != Recheck ||
		plugin.ClassOf(err) != plugin.ClassInvalidConfig {
		t.Errorf("Of(missing credentials) = %+v", got)
	}
	if err.Error() != "invalid provider configuration: credentials Secret team/vault-token not found" {
		t.Errorf("message %q", err)
	}
}

// TestBackoffIsCapped: however long an object kept failing (a provider down
// for hours), its next try is at most MaxBackoff away.
func TestBackoffIsCapped(t *testing.T) {
	limiter := RetryLimiter()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "app"}}
	var last time.Duration
	for range 100 {
		last = limiter.When(req)
	}
	if last != MaxBackoff {
		t.Errorf("after 100 failures the next try is %v away, want %v", last, MaxBackoff)
	}
	limiter.Forget(req)
	if d := limiter.When(req); d > time.Second {
		t.Errorf("after a success the next failure waits %v", d)
	}
}
