// Package clusterpushsecret reconciles ClusterPushSecrets: it keeps one
// PushSecret in every namespace the selectors match, creating, updating and
// deleting them as namespaces come, change labels and go.
package clusterpushsecret

import (
	"context"
	"errors"
	"fmt"
	"maps"

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
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/apis/lenient"
	"github.com/eso-dev/eso/app/fanout"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/statuswrite"
)

// Reconciler reconciles ClusterPushSecrets.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
}

// Reconcile brings the set of PushSecrets in line with the matching namespaces.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cps esv1alpha1.ClusterPushSecret
	if err := r.Client.Get(ctx, req.NamespacedName, &cps); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err) // its PushSecrets go with it (garbage collection)
	}
	if !cps.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := cps.Status.DeepCopy()
	if err := lenient.Error(&cps); err != nil {
		setReady(&cps, metav1.ConditionFalse, esv1alpha1.ReasonInvalidSpec, err.Error())
		return ctrl.Result{}, r.writeStatus(ctx, &cps, before)
	}
	name := cps.Spec.PushSecretName
	if name == "" {
		name = cps.Name
	}
	namespaces, err := fanout.MatchingNamespaces(ctx, r.Client, cps.Spec.NamespaceSelectors, nil)
	if errors.Is(err, fanout.ErrInvalidSelector) {
		setReady(&cps, metav1.ConditionFalse, esv1.ReasonInvalidSelector, err.Error())
		return ctrl.Result{}, r.writeStatus(ctx, &cps, before)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	ch := children(&cps, name)
	var provisioned []string
	var failed []esv1alpha1.ClusterPushSecretNamespaceFailure
	for _, ns := range namespaces {
		if err := ch.Ensure(ctx, r.Client, ns); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{}, err // stale cache: retry
			}
			failed = append(failed, esv1alpha1.ClusterPushSecretNamespaceFailure{Namespace: ns, Reason: err.Error()})
			continue
		}
		provisioned = append(provisioned, ns)
	}
	if err := ch.Prune(ctx, r.Client, namespaces); err != nil {
		return ctrl.Result{}, err
	}
	cps.Status.PushSecretName = name
	cps.Status.ProvisionedNamespaces = provisioned
	cps.Status.FailedNamespaces = failed
	if len(failed) > 0 {
		setReady(&cps, metav1.ConditionFalse, esv1.ReasonNamespacesFailed,
			fmt.Sprintf("%d of %d namespaces could not get PushSecret %s", len(failed), len(namespaces), name))
	} else {
		setReady(&cps, metav1.ConditionTrue, esv1.ReasonProvisioned, fmt.Sprintf("PushSecret %s is in %d namespaces", name, len(namespaces)))
	}
	if err := r.writeStatus(ctx, &cps, before); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: fanout.Interval(cps.Spec.RefreshInterval)}, nil
}

// children are the PushSecrets of a ClusterPushSecret.
func children(cps *esv1alpha1.ClusterPushSecret, name string) fanout.Children[*esv1alpha1.PushSecret] {
	return fanout.Children[*esv1alpha1.PushSecret]{
		Parent: cps, Kind: "PushSecret", ParentKind: "ClusterPushSecret",
		Name: name, Label: esv1alpha1.LabelClusterPushSecret,
		New: func() *esv1alpha1.PushSecret { return &esv1alpha1.PushSecret{} },
		List: func(ctx context.Context, c client.Reader, opts ...client.ListOption) ([]*esv1alpha1.PushSecret, error) {
			var list esv1alpha1.PushSecretList
			if err := c.List(ctx, &list, opts...); err != nil {
				return nil, err
			}
			out := make([]*esv1alpha1.PushSecret, len(list.Items))
			for i := range list.Items {
				out[i] = &list.Items[i]
			}
			return out, nil
		},
		Fill: func(ps *esv1alpha1.PushSecret) {
			ps.Spec = *cps.Spec.PushSecretSpec.DeepCopy()
			ps.Labels = maps.Clone(cps.Spec.PushSecretMetadata.Labels)
			ps.Annotations = maps.Clone(cps.Spec.PushSecretMetadata.Annotations)
		},
		Same: func(existing, desired *esv1alpha1.PushSecret) bool {
			return equality.Semantic.DeepEqual(existing.Spec, desired.Spec) &&
				equality.Semantic.DeepEqual(existing.Labels, desired.Labels) &&
				equality.Semantic.DeepEqual(existing.Annotations, desired.Annotations)
		},
	}
}

func setReady(cps *esv1alpha1.ClusterPushSecret, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&cps.Status.Conditions, metav1.Condition{
		Type: esv1alpha1.ConditionReady, Status: status, Reason: reason, Message: msg, ObservedGeneration: cps.Generation,
	})
}

// writeStatus patches the status only when it changed, with an event when
// it is not Ready.
func (r *Reconciler) writeStatus(ctx context.Context, cps *esv1alpha1.ClusterPushSecret, before *esv1alpha1.ClusterPushSecretStatus) error {
	wrote, err := statuswrite.IfChanged(ctx, r.Client, cps, *before, func(o client.Object) *esv1alpha1.ClusterPushSecretStatus {
		return &o.(*esv1alpha1.ClusterPushSecret).Status
	}, "ClusterPushSecret")
	if err != nil || !wrote {
		return err
	}
	if c := meta.FindStatusCondition(cps.Status.Conditions, esv1alpha1.ConditionReady); c != nil && c.Status != metav1.ConditionTrue {
		r.Recorder.Event(cps, corev1.EventTypeWarning, c.Reason, c.Message)
	}
	return nil
}

// SetupWithManager watches ClusterPushSecrets, the PushSecrets they own (so
// edits are reverted and deletions repaired) and namespaces.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&esv1alpha1.ClusterPushSecret{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&esv1alpha1.PushSecret{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{},
			predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(fanout.RequeueAll(mgr.GetClient(), func() client.ObjectList { return &esv1alpha1.ClusterPushSecretList{} })),
			builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, predicate.GenerationChangedPredicate{}))).
		WithOptions(manager.ControllerOptions(mgr, controller.Options{})).
		Complete(r)
}

// Module runs the ClusterPushSecret controller.
var Module = fx.Module("clusterpushsecret-controller",
	fx.Invoke(func(mgr ctrl.Manager) error {
		r := &Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("eso")}
		return r.SetupWithManager(mgr)
	}),
)
