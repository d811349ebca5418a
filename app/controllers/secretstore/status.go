package secretstore

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers"
)

// readiness is the outcome of validating a store.
type readiness struct {
	reason  string
	message string
	// transient is set when validation could not finish (e.g. the API server
	// was unreachable) and should be retried with backoff.
	transient error
	// recheck: what would fix the failure is not watched (the provider
	// refused the credentials, which live in Secrets eso does not watch), so
	// the store is checked again soon.
	recheck bool
}

func (r readiness) ready() bool { return r.reason == ssv2.ReasonValid }

// failed is the readiness of a store whose validation failed with err, as
// the outcomes table says.
func failed(err error, message string) readiness {
	out := outcomes.Of(err)
	r := readiness{reason: out.StoreReason, message: message, recheck: out.Retry == outcomes.Recheck}
	if out.Retry == outcomes.Backoff {
		r.transient = err
	}
	return r
}

// checkReady validates the store step by step; the first failing step decides
// the reason.
func (c *Reconciler) checkReady(ctx context.Context, s *stores.Store) readiness {
	prov, ref, err := c.Resolver.Provider(s)
	switch {
	case errors.Is(err, stores.ErrNotCompiledIn):
		return failed(err, "provider kind "+ref.Kind+" is not compiled into this eso binary (see `eso providers`)")
	case err != nil:
		return failed(err, err.Error())
	}
	if s.Cluster != nil {
		if err := stores.ValidateConditions(s.Cluster.Conditions); err != nil {
			return readiness{reason: ssv2.ReasonInvalidConditions, message: err.Error()}
		}
	}
	err = prov.Validate(ctx, ref, s.Scope(""))
	if err == nil {
		err = c.checkAuth(ctx, s)
	}
	if err != nil {
		return failed(err, err.Error())
	}
	return readiness{reason: ssv2.ReasonValid, message: "provider configuration " + ref.Kind + " " + ref.Namespace + "/" + ref.Name + " is valid"}
}

// checkAuth proves the provider accepts the store's credentials, on the client
// the store's ExternalSecrets share: the check costs no login of its own, and a
// refused client is dropped so the next attempt reads the credentials afresh.
// Under authenticationScope ManifestNamespace the credentials depend on each
// ExternalSecret's namespace, so there is nothing to check here.
func (c *Reconciler) checkAuth(ctx context.Context, s *stores.Store) error {
	if s.Scope("").Namespace == "" {
		return nil
	}
	fingerprint, err := c.Resolver.Fingerprint(ctx, s)
	if err != nil {
		return err
	}
	cl, release, err := c.Resolver.Client(ctx, s, "", fingerprint)
	if err == nil {
		defer release()
		if checker, ok := cl.(providers.AuthChecker); ok {
			err = checker.CheckAuth(ctx)
		}
	}
	if err != nil && outcomes.Of(err).DropClient {
		c.Resolver.Clients().Forget(ctx, s.Kind, s.Namespace, s.Name)
	}
	return err
}

// setUnknownCondition records that the store could not be validated yet.
func setUnknownCondition(status *ssv2.SecretStoreStatus, generation int64, r readiness) {
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type:               ssv2.ConditionReady,
		Status:             metav1.ConditionUnknown,
		Reason:             r.reason,
		Message:            r.message,
		ObservedGeneration: generation,
	})
	status.ObservedGeneration = generation
}

// setReadyCondition records r as the store's Ready condition.
func setReadyCondition(status *ssv2.SecretStoreStatus, generation int64, r readiness) {
	cond := metav1.Condition{
		Type:               ssv2.ConditionReady,
		Status:             metav1.ConditionFalse,
		Reason:             r.reason,
		Message:            r.message,
		ObservedGeneration: generation,
	}
	if r.ready() {
		cond.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&status.Conditions, cond)
	status.ObservedGeneration = generation
}
