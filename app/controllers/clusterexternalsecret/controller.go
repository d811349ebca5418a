// Package clusterexternalsecret reconciles ClusterExternalSecrets: it keeps
// one ExternalSecret in every namespace the selectors match, creating,
// updating and deleting them as namespaces come, change labels and go.
package clusterexternalsecret

import (
	"context"
	"maps"
	"slices"

	"go.uber.org/fx"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/fanout"
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
	selectors := slices.Clone(ces.Spec.NamespaceSelectors)
	if ces.Spec.NamespaceSelector != nil {
		selectors = append(selectors, ces.Spec.NamespaceSelector)
	}
	ch := children(&ces)
	spread, ready, err := ch.SpreadOver(ctx, r.Client, selectors, ces.Spec.Namespaces)
	if err != nil {
		return ctrl.Result{}, err
	}
	meta.SetStatusCondition(&ces.Status.Conditions, ready)
	if spread == nil {
		return ctrl.Result{}, r.writeStatus(ctx, &ces, before)
	}
	ces.Status.ExternalSecretName = ch.Name
	ces.Status.ProvisionedNamespaces = spread.Provisioned
	ces.Status.FailedNamespaces = nil
	for _, f := range spread.Failed {
		ces.Status.FailedNamespaces = append(ces.Status.FailedNamespaces, esv1.ClusterExternalSecretNamespaceFailure{Namespace: f.Namespace, Reason: f.Reason})
	}
	if err := r.writeStatus(ctx, &ces, before); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: fanout.Interval(ces.Spec.RefreshInterval)}, nil
}

// children are the ExternalSecrets of a ClusterExternalSecret.
func children(ces *esv1.ClusterExternalSecret) fanout.Children[*esv1.ExternalSecret] {
	return fanout.Children[*esv1.ExternalSecret]{
		Parent: ces, Kind: "ExternalSecret", ParentKind: "ClusterExternalSecret",
		Name: ces.TargetExternalSecretName(), Label: esv1.LabelClusterExternalSecret,
		New: func() *esv1.ExternalSecret { return &esv1.ExternalSecret{} },
		List: fanout.ListOf[*esv1.ExternalSecretList, esv1.ExternalSecret](
			func() *esv1.ExternalSecretList { return &esv1.ExternalSecretList{} },
			func(l *esv1.ExternalSecretList) []esv1.ExternalSecret { return l.Items }),
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
		Spec: func(es *esv1.ExternalSecret) any { return es.Spec },
	}
}

// writeStatus writes the status only when it changed, with an event when
// it is not Ready.
func (r *Reconciler) writeStatus(ctx context.Context, ces *esv1.ClusterExternalSecret, before *esv1.ClusterExternalSecretStatus) error {
	return fanout.WriteStatus(ctx, r.Client, r.Recorder, ces, *before, func(o client.Object) *esv1.ClusterExternalSecretStatus {
		return &o.(*esv1.ClusterExternalSecret).Status
	}, ces.Status.Conditions, "ClusterExternalSecret")
}

// SetupWithManager watches ClusterExternalSecrets (their force-sync
// annotation too), the ExternalSecrets they own and namespaces.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return fanout.Setup(mgr, fanout.Watches{
		Parent: &esv1.ClusterExternalSecret{}, Passed: []predicate.Predicate{forceSyncChanged}, Child: &esv1.ExternalSecret{},
		NewList: func() client.ObjectList { return &esv1.ClusterExternalSecretList{} },
	}, r)
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
