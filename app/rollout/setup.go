package rollout

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/workloads"
)

// The cache's indexes, so that a changed Secret finds the workloads asking
// for it without listing a namespace's workloads.
const (
	// indexAsked: a workload, by the Secrets its annotations ask for.
	indexAsked = "rollout.asked"
	// indexTargetSecret: an ExternalSecret that names workloads, by its
	// target Secret.
	indexTargetSecret = "rollout.targetSecret"
	// indexTargetWorkload: an ExternalSecret, by "Kind/name" of each
	// workload it names.
	indexTargetWorkload = "rollout.targetWorkload"
)

// SetupWithManager indexes workloads and ExternalSecrets and watches
// workloads, ExternalSecrets and eso's Secrets.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &esv1.ExternalSecret{}, indexTargetSecret, func(o client.Object) []string {
		if es := o.(*esv1.ExternalSecret); len(es.Spec.RolloutRestartTargets) > 0 {
			return []string{es.TargetName()}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &esv1.ExternalSecret{}, indexTargetWorkload, func(o client.Object) []string {
		var out []string
		for _, t := range o.(*esv1.ExternalSecret).Spec.RolloutRestartTargets {
			out = append(out, t.Kind+"/"+t.Name)
		}
		return out
	}); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).Named("rollout").
		WithOptions(manager.ControllerOptions(mgr, controller.Options{}))
	for _, k := range workloads.Kinds {
		if err := idx.IndexField(ctx, k.New(), indexAsked, func(o client.Object) []string { return workloads.Asked(k, o) }); err != nil {
			return err
		}
		b = b.Watches(k.New(), handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{request(k.Name, o.GetNamespace(), o.GetName())}
		}), builder.WithPredicates(askChanged(k)))
	}
	b = b.Watches(manager.NewSecretMetadata(), handler.EnqueueRequestsFromMapFunc(r.askingFor),
		builder.WithPredicates(dataHashChanged))
	b = b.Watches(&esv1.ExternalSecret{}, handler.EnqueueRequestsFromMapFunc(targetsOf),
		builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	return b.Complete(r)
}

// askingFor maps one of eso's Secrets to the workloads asking for it.
func (r *Reconciler) askingFor(ctx context.Context, secret client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	in := client.InNamespace(secret.GetNamespace())
	for _, k := range workloads.Kinds {
		list := k.NewList()
		if err := r.Client.List(ctx, list, in, client.MatchingFields{indexAsked: secret.GetName()}); err != nil {
			continue // the cache is stopping
		}
		for _, o := range workloads.Items(list) {
			reqs = append(reqs, request(k.Name, o.GetNamespace(), o.GetName()))
		}
	}
	var naming esv1.ExternalSecretList
	if err := r.Client.List(ctx, &naming, in, client.MatchingFields{indexTargetSecret: secret.GetName()}); err == nil {
		for i := range naming.Items {
			reqs = append(reqs, targetsOf(ctx, &naming.Items[i])...)
		}
	}
	return reqs
}

// targetsOf maps an ExternalSecret to the workloads it names.
func targetsOf(_ context.Context, o client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, t := range o.(*esv1.ExternalSecret).Spec.RolloutRestartTargets {
		reqs = append(reqs, request(t.Kind, o.GetNamespace(), t.Name))
	}
	return reqs
}

// dataHashChanged passes a Secret eso now holds with other data: created,
// or updated with another data-hash; not a deletion (nothing to restart
// for) nor a change of anything else.
var dataHashChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetAnnotations()[esv1.AnnotationDataHash] != e.ObjectNew.GetAnnotations()[esv1.AnnotationDataHash]
	},
	DeleteFunc: func(event.DeleteEvent) bool { return false },
}

// askChanged passes a workload whose asking may have changed: created,
// or updated in its annotations, Pod template Secrets or pause (the cache
// keeps nothing else of it, so a rollout's status updates pass nothing).
func askChanged(k workloads.Kind) predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld, e.ObjectNew
			return !equality.Semantic.DeepEqual(o.GetAnnotations(), n.GetAnnotations()) ||
				!equality.Semantic.DeepEqual(k.Template(o), k.Template(n)) || k.Paused(o) != k.Paused(n)
		},
		DeleteFunc: func(event.DeleteEvent) bool { return false },
	}
}
