// Package clusterexternalsecret reconciles ClusterExternalSecrets: it keeps
// one ExternalSecret in every namespace the selectors match, creating,
// updating and deleting them as namespaces come, change labels and go.
package clusterexternalsecret

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/fanout"
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
	if errors.Is(err, fanout.ErrInvalidSelector) {
		setReady(&ces, metav1.ConditionFalse, esv1.ReasonInvalidSelector, err.Error())
		return ctrl.Result{}, r.writeStatus(ctx, &ces, before)
	}
	if err != nil {
		return ctrl.Result{}, err
	}

	var provisioned []string
	var failed []esv1.ClusterExternalSecretNamespaceFailure
	for _, ns := range namespaces {
		if err := children(&ces, name).Ensure(ctx, r.Client, ns); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{}, err // stale cache: retry
			}
			failed = append(failed, esv1.ClusterExternalSecretNamespaceFailure{Namespace: ns, Reason: err.Error()})
			continue
		}
		provisioned = append(provisioned, ns)
	}
	if err := children(&ces, name).Prune(ctx, r.Client, namespaces); err != nil {
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
	return ctrl.Result{RequeueAfter: fanout.Interval(ces.Spec.RefreshInterval)}, nil
}

// matchingNamespaces lists, sorted, the live namespaces the spec selects.
func (r *Reconciler) matchingNamespaces(ctx context.Context, ces *esv1.ClusterExternalSecret) ([]string, error) {
	selectors := slices.Clone(ces.Spec.NamespaceSelectors)
	if ces.Spec.NamespaceSelector != nil {
		selectors = append(selectors, ces.Spec.NamespaceSelector)
	}
	return fanout.MatchingNamespaces(ctx, r.Client, selectors, ces.Spec.Namespaces)
}

// children are the ExternalSecrets of a ClusterExternalSecret.
func children(ces *esv1.ClusterExternalSecret, name string) fanout.Children[*esv1.ExternalSecret] {
	return fanout.Children[*esv1.ExternalSecret]{
		Parent: ces, Kind: "ExternalSecret", ParentKind: "ClusterExternalSecret",
		Name: name, Label: esv1.LabelClusterExternalSecret,
		New: func() *esv1.ExternalSecret { return &esv1.ExternalSecret{} },
		List: func(ctx context.Context, c client.Reader, opts ...client.ListOption) ([]*esv1.ExternalSecret, error) {
			var list esv1.ExternalSecretList
			if err := c.List(ctx, &list, opts...); err != nil {
				return nil, err
			}
			out := make([]*esv1.ExternalSecret, len(list.Items))
			for i := range list.Items {
				out[i] = &list.Items[i]
			}
			return out, nil
		},
		Fill: func(es *esv1.ExternalSecret) {
			es.Spec = *ces.Spec.ExternalSecretSpec.DeepCopy()
			es.Labels = maps.Clone(ces.Spec.ExternalSecretMetadata.Labels)
			es.Annotations = maps.Clone(ces.Spec.ExternalSecretMetadata.Annotations)
			// As upstream: force-sync on the ClusterExternalSecret resyncs
			// every ExternalSecret it stamps, and goes with it.
			if v, ok := ces.Annotations[esv1.AnnotationForceSync]; ok {
				if es.Annotations == nil {
					es.Annotations = map[string]string{}
				}
				es.Annotations[esv1.AnnotationForceSync] = v
			}
		},
		Same: func(existing, desired *esv1.ExternalSecret) bool {
			return equality.Semantic.DeepEqual(existing.Spec, desired.Spec) &&
				equality.Semantic.DeepEqual(existing.Labels, desired.Labels) &&
				equality.Semantic.DeepEqual(existing.Annotations, desired.Annotations)
		},
	}
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

// SetupWithManager watches ClusterExternalSecrets, the ExternalSecrets they
// own (so edits are reverted and deletions repaired) and namespaces.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&esv1.ClusterExternalSecret{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, forceSyncChanged))).
		Owns(&esv1.ExternalSecret{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{},
			predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(fanout.RequeueAll(mgr.GetClient(), func() client.ObjectList { return &esv1.ClusterExternalSecretList{} })),
			builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, predicate.GenerationChangedPredicate{}))).
		WithOptions(manager.ControllerOptions(mgr, controller.Options{})).
		Complete(r)
}

// forceSyncChanged passes a change of a ClusterExternalSecret's force-sync
// annotation, the only annotation it passes on.
var forceSyncChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetAnnotations()[esv1.AnnotationForceSync] != e.ObjectNew.GetAnnotations()[esv1.AnnotationForceSync]
	},
}

// Module runs the ClusterExternalSecret controller.
var Module = fx.Module("clusterexternalsecret-controller",
	fx.Invoke(func(mgr ctrl.Manager) error {
		r := &Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("eso")}
		return r.SetupWithManager(mgr)
	}),
)
