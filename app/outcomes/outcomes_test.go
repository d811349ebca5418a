package outcomes

import (
	"errors"
	"fmt"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/grpcclient"
	"github.com/eso-dev/eso/app/grpcwire"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers"
)

// TestOutcomes: what eso says and does for the failures people meet,
// however deeply the error is wrapped.
func TestOutcomes(t *testing.T) {
	cases := []struct {
		err        error
		store, es  string
		retry      Retry
		dropClient bool
		class      providers.Class
	}{
		{providers.ErrAuthFailed, ssv2.ReasonAuthenticationFailed, esv1.ReasonSecretSyncedError, Recheck, true, providers.ClassAuthFailed},
		{providers.ErrOutOfScope, ssv2.ReasonCrossNamespaceRefused, esv1.ReasonStoreNotAllowed, Wait, true, providers.ClassOutOfScope},
		{providers.ErrInvalidConfig, ssv2.ReasonInvalidProviderConfig, esv1.ReasonProviderError, Wait, false, providers.ClassInvalidConfig},
		{providers.ErrNoAmbientCredentials, ssv2.ReasonInvalidProviderConfig, esv1.ReasonProviderError, Wait, false, providers.ClassInvalidConfig},
		{providers.ErrConfigNotFound, ssv2.ReasonProviderRefNotFound, esv1.ReasonProviderError, Wait, false, providers.ClassConfigNotFound},
		{providers.ErrTooLarge, ssv2.ReasonInvalidProviderConfig, esv1.ReasonProviderError, Wait, false, providers.ClassTooLarge},
		{fmt.Errorf("%w: %w", providers.ErrSecretNotFound, providers.ErrPropertyNotFound), "", esv1.ReasonSecretNotFound, Wait, false, providers.ClassPropertyNotFound},
		{grpcclient.ErrIncompatibleProvider, ssv2.ReasonIncompatibleProvider, esv1.ReasonUnsupportedStore, Wait, true, providers.ClassIncompatible},
		{grpcclient.ErrKindNotServed, ssv2.ReasonIncompatibleProvider, esv1.ReasonUnsupportedStore, Wait, true, providers.ClassIncompatible},
		{grpcwire.ErrUnavailable, ssv2.ReasonValidationFailed, esv1.ReasonSecretSyncedError, Backoff, false, providers.ClassUnavailable},
		{providers.ErrThrottled, ssv2.ReasonValidationFailed, esv1.ReasonSecretSyncedError, Backoff, false, providers.ClassThrottled},
		{errors.New("connection reset by peer"), ssv2.ReasonValidationFailed, esv1.ReasonSecretSyncedError, Backoff, false, providers.ClassUnknown},
		{stores.ErrNotCompiledIn, ssv2.ReasonProviderNotCompiledIn, esv1.ReasonUnsupportedStore, Wait, false, providers.ClassUnknown},
		{stores.ErrStoreNotReady, "", esv1.ReasonStoreNotReady, Wait, false, providers.ClassUnknown},
	}
	for _, tc := range cases {
		got := Of(fmt.Errorf("reading db: %w", tc.err))
		want := Outcome{Class: tc.class, StoreReason: tc.store, ExternalSecretReason: tc.es, Retry: tc.retry, DropClient: tc.dropClient}
		if got != want {
			t.Errorf("Of(%v) = %+v, want %+v", tc.err, got, want)
		}
	}
}

// TestEveryRowIsReachable: no row hides behind an earlier one, so each
// says what happens to its error.
func TestEveryRowIsReachable(t *testing.T) {
	for _, row := range table {
		got := Of(fmt.Errorf("wrapped: %w", row.err))
		got.Class = ""
		if got != row.out {
			t.Errorf("%v: an earlier row decides (%+v), not its own (%+v)", row.err, got, row.out)
		}
	}
}

// TestForStore: a failure only syncs meet reads, for a store or generator,
// as a validation that could not finish: retried with backoff, never an
// empty reason.
func TestForStore(t *testing.T) {
	for _, err := range []error{providers.ErrSecretNotFound, providers.ErrNotManaged, stores.ErrStoreNotReady} {
		got := Of(err).ForStore()
		if got.StoreReason != ssv2.ReasonValidationFailed || got.Retry != Backoff {
			t.Errorf("ForStore(%v) = %+v", err, got)
		}
	}
	if got := Of(providers.ErrAuthFailed).ForStore(); got.StoreReason != ssv2.ReasonAuthenticationFailed || got.Retry != Recheck {
		t.Errorf("a store reason of its own was replaced: %+v", got)
	}
}

// TestMissingCredentialsAreRechecked: a credentials Secret that does not
// exist yet is an invalid configuration that fixes itself when the Secret
// arrives, which eso does not watch: checked again soon, not left waiting.
func TestMissingCredentialsAreRechecked(t *testing.T) {
	err := fmt.Errorf("%w: credentials Secret team/vault-token not found", providers.ErrCredentialsNotFound)
	got := Of(err)
	if got.StoreReason != ssv2.ReasonInvalidProviderConfig || got.Retry != Recheck || got.Class != providers.ClassInvalidConfig {
		t.Errorf("Of(missing credentials) = %+v", got)
	}
	if err.Error() != "invalid provider configuration: credentials Secret team/vault-token not found" {
		t.Errorf("message %q", err)
	}
}
