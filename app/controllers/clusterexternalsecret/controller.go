// Package clusterexternalsecret reconciles ClusterExternalSecrets: it keeps
// one ExternalSecret in every namespace the selectors match, creating,
// updating and deleting them as namespaces come, change labels and go.
package clusterexternalsecret

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/statuswrite"
)

// Reconciler reconciles ClusterExternalSecrets.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
}

// Reconcile brings the set of ExternalSecrets in line with the matching namespaces.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ces esv1.ClusterExternalSecret
	if err := r.Client.Get(ctx, req.NamespacedName, &ces); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err) // owned ExternalSecrets go with it (garbage collection)
	}
	if !ces.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := ces.Status.DeepCopy()
	name := ces.TargetExternalSecretName()

	namespaces, err := r.matchingNamespaces(ctx, &ces)
	if errors.Is(err, errInvalidSelector) {
		setReady(&ces, metav1.ConditionFalse, esv1.ReasonInvalidSelector, err.Error())
		return ctrl.Result{}, r.writeStatus(ctx, &ces, before)
	}
	if err != nil {
		return ctrl.Result{}, err
	}

	var provisioned []string
	var failed []esv1.ClusterExternalSecretNamespaceFailure
	for _, ns := range namespaces {
		if err := r.ensure(ctx, &ces, ns, name); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{}, err // stale cache: retry
			}
			failed = append(failed, esv1.ClusterExternalSecretNamespaceFailure{Namespace: ns, Reason: err.Error()})
			continue
		}
		provisioned = append(provisioned, ns)
	}
	if err := r.prune(ctx, &ces, name, namespaces); err != nil {
		return ctrl.Result{}, err
	}

	ces.Status.ExternalSecretName = name
	ces.Status.ProvisionedNamespaces = provisioned
	ces.Status.FailedNamespaces = failed
	if len(failed) > 0 {
		setReady(&ces, metav1.ConditionFalse, esv1.ReasonNamespacesFailed,
			fmt.Sprintf("%d of %d namespaces could not get ExternalSecret %s", len(failed), len(namespaces), name))
	} else {
		setReady(&ces, metav1.ConditionTrue, esv1.ReasonProvisioned,
			fmt.Sprintf("ExternalSecret %s is in %d namespaces", name, len(namespaces)))
	}
	if err := r.writeStatus(ctx, &ces, before); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: refreshInterval(&ces)}, nil
}

// matchingNamespaces lists, sorted, the live namespaces the spec selects.
func (r *Reconciler) matchingNamespaces(ctx context.Context, ces *esv1.ClusterExternalSecret) ([]string, error) {
	selectors := slices.Clone(ces.Spec.NamespaceSelectors)
	if ces.Spec.NamespaceSelector != nil {
		selectors = append(selectors, ces.Spec.NamespaceSelector)
	}
	var parsed []labels.Selector
	for i, s := range selectors {
		sel, err := metav1.LabelSelectorAsSelector(s)
		if err != nil {
			return nil, fmt.Errorf("%w %d: %v", errInvalidSelector, i, err)
		}
		parsed = append(parsed, sel)
	}
	var list corev1.NamespaceList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil, err
	}
	var out []string
	for _, ns := range list.Items {
		if ns.Status.Phase == corev1.NamespaceTerminating || !ns.DeletionTimestamp.IsZero() {
			continue
		}
		match := slices.Contains(ces.Spec.Namespaces, ns.Name)
		for _, sel := range parsed {
			match = match || sel.Matches(labels.Set(ns.Labels))
		}
		if match {
			out = append(out, ns.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// ensure makes namespace hold the ExternalSecret as specified, writing only
// when it differs. An ExternalSecret of that name it does not own is left alone.
func (r *Reconciler) ensure(ctx context.Context, ces *esv1.ClusterExternalSecret, namespace, name string) error {
	var existing esv1.ExternalSecret
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &existing)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	found := err == nil
	if found && !metav1.IsControlledBy(&existing, ces) {
		return fmt.Errorf("an ExternalSecret %s/%s exists and is not managed by this ClusterExternalSecret", namespace, name)
	}
	desired := existing.DeepCopy()
	desired.Namespace, desired.Name = namespace, name
	desired.Spec = *ces.Spec.ExternalSecretSpec.DeepCopy()
	desired.Labels = maps.Clone(ces.Spec.ExternalSecretMetadata.Labels)
	if desired.Labels == nil {
		desired.Labels = map[string]string{}
	}
	desired.Labels[esv1.LabelClusterExternalSecret] = ownerLabel(ces)
	desired.Annotations = maps.Clone(ces.Spec.ExternalSecretMetadata.Annotations)
	if err := controllerutil.SetControllerReference(ces, desired, r.Client.Scheme()); err != nil {
		return err
	}
	if !found {
		return r.Client.Create(ctx, desired)
	}
	if equality.Semantic.DeepEqual(existing.Spec, desired.Spec) &&
		equality.Semantic.DeepEqual(existing.Labels, desired.Labels) &&
		equality.Semantic.DeepEqual(existing.Annotations, desired.Annotations) {
		return nil
	}
	return r.Client.Update(ctx, desired)
}

// prune deletes the ExternalSecrets this object created that no longer belong:
// their namespace stopped matching, or the name changed.
func (r *Reconciler) prune(ctx context.Context, ces *esv1.ClusterExternalSecret, name string, namespaces []string) error {
	var list esv1.ExternalSecretList
	if err := r.Client.List(ctx, &list, client.MatchingLabels{esv1.LabelClusterExternalSecret: ownerLabel(ces)}); err != nil {
		return err
	}
	for i := range list.Items {
		es := &list.Items[i]
		if !metav1.IsControlledBy(es, ces) || (es.Name == name && slices.Contains(namespaces, es.Namespace)) {
			continue
		}
		if err := r.Client.Delete(ctx, es, client.Preconditions{UID: &es.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting ExternalSecret %s/%s: %w", es.Namespace, es.Name, err)
		}
	}
	return nil
}

var errInvalidSelector = errors.New("invalid namespace selector")

// ownerLabel is the label value marking the ExternalSecrets of a
// ClusterExternalSecret: its name, or for names longer than a label value may
// be, a prefix and a digest. Ownership itself is the controller reference.
func ownerLabel(ces *esv1.ClusterExternalSecret) string {
	if len(ces.Name) <= 63 {
		return ces.Name
	}
	sum := sha256.Sum256([]byte(ces.Name))
	return ces.Name[:46] + "-" + hex.EncodeToString(sum[:])[:16]
}

func setReady(ces *esv1.ClusterExternalSecret, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&ces.Status.Conditions, metav1.Condition{
		Type: esv1.ConditionReady, Status: status, Reason: reason, Message: msg, ObservedGeneration: ces.Generation,
	})
}

// writeStatus patches the status only when it changed.
func (r *Reconciler) writeStatus(ctx context.Context, ces *esv1.ClusterExternalSecret, before *esv1.ClusterExternalSecretStatus) error {
	wrote, err := statuswrite.IfChanged(ctx, r.Client, ces, *before, func(o client.Object) *esv1.ClusterExternalSecretStatus {
		return &o.(*esv1.ClusterExternalSecret).Status
	}, "ClusterExternalSecret")
	if err != nil || !wrote {
		return err
	}
	if c := meta.FindStatusCondition(ces.Status.Conditions, esv1.ConditionReady); c != nil && c.Status != metav1.ConditionTrue {
		r.Recorder.Event(ces, corev1.EventTypeWarning, c.Reason, c.Message)
	}
	return nil
}

func refreshInterval(ces *esv1.ClusterExternalSecret) time.Duration {
	if ces.Spec.RefreshInterval == nil || ces.Spec.RefreshInterval.Duration <= 0 {
		return time.Minute
	}
	return ces.Spec.RefreshInterval.Duration
}

// SetupWithManager watches ClusterExternalSecrets, the ExternalSecrets they
// own (so edits are reverted and deletions repaired) and namespaces.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&esv1.ClusterExternalSecret{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&esv1.ExternalSecret{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{},
			predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.all),
			builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, predicate.GenerationChangedPredicate{}))).
		WithOptions(manager.ControllerOptions(mgr, controller.Options{})).
		Complete(r)
}

// all enqueues every ClusterExternalSecret: any may select a changed namespace.
func (r *Reconciler) all(ctx context.Context, _ client.Object) []reconcile.Request {
	var list esv1.ClusterExternalSecretList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		reqs[i] = reconcile.Request{NamespacedName: client.ObjectKey{Name: list.Items[i].Name}}
	}
	return reqs
}

// Module runs the ClusterExternalSecret controller.
var Module = fx.Module("clusterexternalsecret-controller",
	fx.Invoke(func(mgr ctrl.Manager) error {
		r := &Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("eso")}
		return r.SetupWithManager(mgr)
	}),
)
