// Package clusterpushsecret reconciles ClusterPushSecrets: it keeps one
// PushSecret in every namespace the selectors match, creating, updating and
// deleting them as namespaces come, change labels and go.
package clusterpushsecret

import (
	"context"
	"maps"

	"go.uber.org/fx"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/apis/lenient"
	"github.com/eso-dev/eso/app/fanout"
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
		meta.SetStatusCondition(&cps.Status.Conditions, fanout.NotReady(&cps, esv1alpha1.ReasonInvalidSpec, err.Error()))
		return ctrl.Result{}, r.writeStatus(ctx, &cps, before)
	}
	ch := children(&cps)
	spread, ready, err := ch.SpreadOver(ctx, r.Client, cps.Spec.NamespaceSelectors, nil)
	if err != nil {
		return ctrl.Result{}, err
	}
	meta.SetStatusCondition(&cps.Status.Conditions, ready)
	if spread == nil {
		return ctrl.Result{}, r.writeStatus(ctx, &cps, before)
	}
	cps.Status.PushSecretName = ch.Name
	cps.Status.ProvisionedNamespaces = spread.Provisioned
	cps.Status.FailedNamespaces = nil
	for _, f := range spread.Failed {
		cps.Status.FailedNamespaces = append(cps.Status.FailedNamespaces, esv1alpha1.ClusterPushSecretNamespaceFailure{Namespace: f.Namespace, Reason: f.Reason})
	}
	if err := r.writeStatus(ctx, &cps, before); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: fanout.Interval(cps.Spec.RefreshInterval)}, nil
}

// children are the PushSecrets of a ClusterPushSecret: named
// spec.pushSecretName, or as the ClusterPushSecret.
func children(cps *esv1alpha1.ClusterPushSecret) fanout.Children[*esv1alpha1.PushSecret] {
	name := cps.Spec.PushSecretName
	if name == "" {
		name = cps.Name
	}
	return fanout.Children[*esv1alpha1.PushSecret]{
		Parent: cps, Kind: "PushSecret", ParentKind: "ClusterPushSecret",
		Name: name, Label: esv1alpha1.LabelClusterPushSecret,
		New: func() *esv1alpha1.PushSecret { return &esv1alpha1.PushSecret{} },
		List: fanout.ListOf[*esv1alpha1.PushSecretList, esv1alpha1.PushSecret](
			func() *esv1alpha1.PushSecretList { return &esv1alpha1.PushSecretList{} },
			func(l *esv1alpha1.PushSecretList) []esv1alpha1.PushSecret { return l.Items }),
		Fill: func(ps *esv1alpha1.PushSecret) {
			ps.Spec = *cps.Spec.PushSecretSpec.DeepCopy()
			ps.Labels = maps.Clone(cps.Spec.PushSecretMetadata.Labels)
			ps.Annotations = maps.Clone(cps.Spec.PushSecretMetadata.Annotations)
		},
		Spec: func(ps *esv1alpha1.PushSecret) any { return ps.Spec },
	}
}

// writeStatus writes the status only when it changed, with an event when
// it is not Ready.
func (r *Reconciler) writeStatus(ctx context.Context, cps *esv1alpha1.ClusterPushSecret, before *esv1alpha1.ClusterPushSecretStatus) error {
	return fanout.WriteStatus(ctx, r.Client, r.Recorder, cps, *before, func(o client.Object) *esv1alpha1.ClusterPushSecretStatus {
		return &o.(*esv1alpha1.ClusterPushSecret).Status
	}, cps.Status.Conditions, "ClusterPushSecret")
}

// SetupWithManager watches ClusterPushSecrets, the PushSecrets they own and
// namespaces.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return fanout.Setup(mgr, fanout.Watches{
		Parent: &esv1alpha1.ClusterPushSecret{}, Child: &esv1alpha1.PushSecret{},
		NewList: func() client.ObjectList { return &esv1alpha1.ClusterPushSecretList{} },
	}, r)
}

// Module runs the ClusterPushSecret controller.
var Module = fx.Module("clusterpushsecret-controller",
	fx.Invoke(func(mgr ctrl.Manager) error {
		r := &Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("eso")}
		return r.SetupWithManager(mgr)
	}),
)
