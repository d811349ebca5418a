// Package generatorstate reconciles GeneratorStates: when one's deadline has
// passed and no target Secret holds its value any more, it revokes the value
// through its generator and deletes the state; when the state is deleted
// (e.g. with its ExternalSecret) it revokes first. A state still listed by
// its target is in use, whatever its deadline says.
//
// GeneratorStates live in tenants' namespaces, so a tenant can forge one.
// The controller acts only on states whose provenance eso signed; any other
// gets Verified=False and loses eso's finalizer, and its generator is never
// called.
package generatorstate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	"github.com/eso-dev/eso/app/generation"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/statuswrite"
	"github.com/eso-dev/eso/providers/plugin"
)

// Reconciler collects GeneratorStates.
type Reconciler struct {
	Client client.Client
	// APIReader reads the metadata of target Secrets from the API server.
	APIReader client.Reader
	// Resolver finds the generator that revokes a state.
	Resolver *generation.Resolver
	// Signer verifies that eso wrote a state.
	Signer *generation.Signer
	Now    func() time.Time
}

// Reconcile revokes and deletes a state that is due, or waits for its deadline.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var st genv2.GeneratorState
	if err := r.Client.Get(ctx, req.NamespacedName, &st); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if err := r.Signer.Verify(ctx, &st); err != nil {
		if errors.Is(err, generation.ErrUnverifiedState) {
			return ctrl.Result{}, r.disown(ctx, &st, err)
		}
		return ctrl.Result{}, err
	}
	if !st.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.revokeAndRelease(ctx, &st)
	}
	deadline := st.Spec.GarbageCollectionDeadline
	if deadline == nil {
		return ctrl.Result{}, nil // in use
	}
	if wait := deadline.Sub(r.Now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	inUse, err := r.inUse(ctx, &st)
	if err != nil {
		return ctrl.Result{}, err
	}
	if inUse {
		// The target was written but the state never committed (eso
		// stopped in between): the value is in use, keep it.
		orig := st.DeepCopy()
		st.Spec.GarbageCollectionDeadline = nil
		return ctrl.Result{}, r.Client.Patch(ctx, &st, client.MergeFrom(orig))
	}
	if err := r.revokeAndRelease(ctx, &st); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Delete(ctx, &st))
}

// inUse reports whether the target Secret of the state's ExternalSecret lists it.
func (r *Reconciler) inUse(ctx context.Context, st *genv2.GeneratorState) (bool, error) {
	var es esv1.ExternalSecret
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: st.Namespace, Name: st.Labels[genv2.LabelExternalSecret]}, &es)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// Its annotations are all it takes: read as metadata only, from the API
	// server, as the target may not be labelled as eso's (Merge) and the
	// cache may hold only part of them.
	target := manager.NewSecretMetadata()
	key := client.ObjectKey{Namespace: st.Namespace, Name: es.TargetName()}
	if err := r.APIReader.Get(ctx, key, target); apierrors.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return slices.Contains(generation.TargetStates(&corev1.Secret{ObjectMeta: target.ObjectMeta}), st.Name), nil
}

// revokeAndRelease revokes the state's value and drops the finalizer. A
// failing revocation is recorded on the state and retried with backoff.
func (r *Reconciler) revokeAndRelease(ctx context.Context, st *genv2.GeneratorState) error {
	if !controllerutil.ContainsFinalizer(st, genv2.FinalizerCleanup) {
		return nil
	}
	if err := r.revoke(ctx, st); err != nil {
		r.setCleanupCondition(ctx, st, err)
		return err
	}
	orig := st.DeepCopy()
	controllerutil.RemoveFinalizer(st, genv2.FinalizerCleanup)
	return client.IgnoreNotFound(r.Client.Patch(ctx, st, client.MergeFrom(orig)))
}

func (r *Reconciler) revoke(ctx context.Context, st *genv2.GeneratorState) error {
	if st.Spec.State == nil || len(st.Spec.State.Raw) == 0 {
		return nil // nothing was issued that could be revoked
	}
	gen, err := r.Resolver.ForState(ctx, st)
	if err != nil {
		return err
	}
	ref := plugin.Ref{Kind: st.Spec.ProviderRef.Kind, Namespace: st.Spec.ProviderRef.Namespace, Name: st.Spec.ProviderRef.Name}
	scope := plugin.Scope{Namespace: st.Spec.CredentialsNamespace}
	if err := gen.Cleanup(ctx, ref, scope, plugin.State(st.Spec.State.Raw)); err != nil {
		return fmt.Errorf("revoking with %s %s/%s: %w", ref.Kind, ref.Namespace, ref.Name, err)
	}
	return nil
}

// disown marks a state eso cannot prove it wrote and drops eso's finalizer,
// so its owner can delete it; nothing it names is ever used.
func (r *Reconciler) disown(ctx context.Context, st *genv2.GeneratorState, cause error) error {
	before := *st.Status.DeepCopy()
	meta.SetStatusCondition(&st.Status.Conditions, metav1.Condition{
		Type: genv2.ConditionVerified, Status: metav1.ConditionFalse, Reason: genv2.ReasonProvenanceInvalid, Message: cause.Error(),
	})
	if _, err := statuswrite.IfChanged(ctx, r.Client, nil, st, before, stateStatus, "GeneratorState"); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !controllerutil.ContainsFinalizer(st, genv2.FinalizerCleanup) {
		return nil
	}
	orig := st.DeepCopy()
	controllerutil.RemoveFinalizer(st, genv2.FinalizerCleanup)
	return client.IgnoreNotFound(r.Client.Patch(ctx, st, client.MergeFrom(orig)))
}

// setCleanupCondition records why a revocation failed, writing only on change.
func (r *Reconciler) setCleanupCondition(ctx context.Context, st *genv2.GeneratorState, cause error) {
	before := *st.Status.DeepCopy()
	meta.SetStatusCondition(&st.Status.Conditions, metav1.Condition{
		Type: genv2.ConditionCleanup, Status: metav1.ConditionFalse, Reason: genv2.ReasonRevocationFailed, Message: cause.Error(),
	})
	if _, err := statuswrite.IfChanged(ctx, r.Client, nil, st, before, stateStatus, "GeneratorState"); err != nil && !apierrors.IsNotFound(err) {
		ctrl.LoggerFrom(ctx).Error(errors.Join(cause, err), "recording a failed revocation")
	}
}

func stateStatus(o client.Object) *genv2.GeneratorStateStatus {
	return &o.(*genv2.GeneratorState).Status
}

// SetupWithManager watches GeneratorStates.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("generatorstate").For(&genv2.GeneratorState{}).
		WithOptions(manager.ControllerOptions(mgr, &genv2.GeneratorState{}, controller.Options{})).Complete(r)
}

// Module runs the GeneratorState controller.
var Module = fx.Module("generatorstate-controller",
	fx.Invoke(func(mgr ctrl.Manager, resolver *generation.Resolver, signer *generation.Signer) error {
		r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Resolver: resolver, Signer: signer, Now: time.Now}
		return r.SetupWithManager(mgr)
	}),
)
