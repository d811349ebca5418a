package secretstore

import (
	"context"
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eso-dev/eso/apis/lenient"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/steps"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
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
	// cause is the failure; when it names an object (a credentials Secret
	// not there yet), the store awaits it.
	cause error
}

func (r readiness) ready() bool { return r.reason == ssv2.ReasonValid }

// failed is the readiness of a store whose validation failed with err, as
// the outcomes table says.
func failed(err error, message string) *readiness {
	out := outcomes.Of(err).ForStore()
	r := &readiness{reason: out.StoreReason, message: message, recheck: out.StoreRetry == outcomes.Recheck, cause: err}
	if out.StoreRetry == outcomes.Backoff {
		r.transient = err
	}
	return r
}

// storeScope is one validation of one store, filled in by the steps.
type storeScope struct {
	store *stores.Store
	prov  plugin.Provider
	ref   plugin.Ref
}

// validationStep is one check of a store; it returns the failure, or nil
// when the store passes it.
type validationStep = steps.Step[*storeScope, *readiness]

// validationSteps check a store in order; the first failure decides its
// Ready reason.
func (c *Reconciler) validationSteps() []validationStep {
	return []validationStep{
		decodeStore,
		c.resolveProvider,
		checkConditions,
		c.validateConfig,
		c.checkCredentials,
	}
}

// checkReady runs the validation steps.
func (c *Reconciler) checkReady(ctx context.Context, s *stores.Store) readiness {
	sc := &storeScope{store: s}
	if r, _ := steps.Run(ctx, sc, c.validationSteps()...); r != nil {
		return *r
	}
	msg := "provider configuration " + sc.ref.Kind + " " + sc.ref.Namespace + "/" + sc.ref.Name + " is valid"
	if s.Inline != nil {
		msg = "provider configuration (" + sc.ref.Kind + ") is valid"
	}
	if len(s.Notes) > 0 {
		msg += "; without effect in eso: " + strings.Join(s.Notes, "; ")
	}
	return readiness{reason: ssv2.ReasonValid, message: msg}
}

// Verdict is what one validation of a store concludes: its Ready reason
// and message, as the controller would write them.
type Verdict struct {
	Reason  string
	Message string
	// Valid: the store is Ready. Transient: validation could not finish
	// (the controller keeps a Ready store Ready and retries with backoff).
	Valid, Transient bool
}

// Validate runs the controller's validation steps on s once, without
// writing anything to the store (what `eso check store` shows).
func (c *Reconciler) Validate(ctx context.Context, s *stores.Store) Verdict {
	r := c.checkReady(ctx, s)
	return Verdict{Reason: r.reason, Message: r.message, Valid: r.ready(), Transient: r.transient != nil}
}

// decodeStore refuses a store whose spec did not decode: nothing of it is
// validated.
func decodeStore(_ context.Context, sc *storeScope) (*readiness, error) {
	if err := lenient.Error(sc.store.Object); err != nil {
		return &readiness{reason: ssv2.ReasonInvalidSpec, message: err.Error()}, nil
	}
	return nil, nil
}

// resolveProvider finds the provider serving the store's configuration
// kind, in process or remote.
func (c *Reconciler) resolveProvider(_ context.Context, sc *storeScope) (*readiness, error) {
	prov, ref, err := c.Resolver.Provider(sc.store)
	switch {
	case errors.Is(err, stores.ErrNotCompiledIn):
		if near := plugin.Closest(ref.Kind, c.Resolver.Plugins().Index().Kinds(plugin.RoleProvider)); near != "" {
			return failed(err, "unknown provider kind "+ref.Kind+": did you mean "+near+"?"), nil
		}
		return failed(err, "provider kind "+ref.Kind+" is not compiled into this eso binary (see `eso providers`)"), nil
	case err != nil:
		return failed(err, err.Error()), nil
	}
	sc.prov, sc.ref = prov, ref
	return nil, nil
}

// checkConditions checks a ClusterSecretStore's namespace conditions.
func checkConditions(_ context.Context, sc *storeScope) (*readiness, error) {
	if sc.store.Cluster == nil {
		return nil, nil
	}
	if err := stores.ValidateConditions(sc.store.Cluster.Conditions); err != nil {
		return &readiness{reason: ssv2.ReasonInvalidConditions, message: err.Error()}, nil
	}
	return nil, nil
}

// validateConfig has the provider check its configuration, without reading
// a secret.
func (c *Reconciler) validateConfig(ctx context.Context, sc *storeScope) (*readiness, error) {
	if err := c.Resolver.Validate(ctx, sc.store, sc.prov, sc.ref, sc.store.Scope("")); err != nil {
		return failed(err, err.Error()), nil
	}
	return nil, nil
}

// checkCredentials proves the provider accepts the store's credentials.
func (c *Reconciler) checkCredentials(ctx context.Context, sc *storeScope) (*readiness, error) {
	if err := c.checkAuth(ctx, sc.store); err != nil {
		return failed(err, err.Error()), nil
	}
	return nil, nil
}

// checkAuth proves the provider accepts the store's credentials, on the client
// the store's ExternalSecrets share: a check of a client in use costs no
// login of its own, and a refused client is dropped so the next attempt
// reads the credentials afresh. A refusal of a client that logged in
// earlier is no verdict on the current credentials (a token rotated in its
// Secret since): the check is made once more on a new client before the
// store is declared refused, rather than gate every ExternalSecret until
// the recheck.
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
	built, err := c.checkClient(ctx, s, fingerprint)
	if err != nil && !built && outcomes.Of(err).DropClient {
		_, err = c.checkClient(ctx, s, fingerprint)
	}
	return err
}

// checkClient checks the credentials of the store's shared client, dropping
// it when refused, and reports whether it was built for this check.
func (c *Reconciler) checkClient(ctx context.Context, s *stores.Store, fingerprint string) (built bool, err error) {
	cl, release, built, err := c.Resolver.ClientBuilt(ctx, s, "", fingerprint)
	if err == nil {
		defer release()
		if checker, ok := cl.(plugin.AuthChecker); ok {
			err = checker.CheckAuth(ctx)
		}
		if err == nil {
			s.Status.Capabilities = string(cl.Capabilities())
		}
	}
	if err != nil && outcomes.Of(err).DropClient {
		c.Resolver.Clients().Forget(ctx, s.CacheKind(), s.Namespace, s.Name)
	}
	return built, err
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
