package rollout

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
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
	"github.com/eso-dev/eso/app/sharding"
	"github.com/eso-dev/eso/app/workloads"
)

// The cache's indexes, so that a changed Secret finds the workloads asking
// for it without listing a namespace's workloads.
const (
	// indexAsked: a workload, by the Secrets its annotations ask for by
	// name, and by anyPattern when they ask by pattern too.
	indexAsked = "rollout.asked"
	anyPattern = "*"
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
	if err := idx.IndexField(ctx, &esv1.ExternalSecret{}, indexTargetSecret, targetSecretOf); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &esv1.ExternalSecret{}, indexTargetWorkload, targetWorkloadsOf); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).Named("rollout").
		WithOptions(manager.ControllerOptionsListing(mgr, workloadsIn(mgr.GetCache()), controller.Options{MaxConcurrentReconciles: 2}))
	for _, k := range workloads.Kinds {
		if err := idx.IndexField(ctx, k.New(), indexAsked, func(o client.Object) []string { return askedKeys(k, o) }); err != nil {
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

// workloadsIn lists the workloads of the namespaces keep accepts, as
// requests: with --shards auto, what a replica queues for the namespaces
// it gains, so that a Secret that changed while its namespace moved between
// replicas still restarts the workloads that ask for it. A workload that
// asks for nothing is done at once. Given the namespaces gained, it lists
// those alone.
func workloadsIn(cache client.Reader) sharding.Lister {
	return func(ctx context.Context, namespaces []string, keep func(key string) bool) ([]reconcile.Request, error) {
		var reqs []reconcile.Request
		for _, k := range workloads.Kinds {
			for _, in := range sharding.ListScopes(namespaces) {
				list := k.NewList()
				if err := cache.List(ctx, list, in, client.UnsafeDisableDeepCopy); err != nil {
					return nil, err
				}
				err := meta.EachListItem(list, func(o runtime.Object) error {
					if w, ok := o.(client.Object); ok && keep(sharding.Key(w.GetNamespace(), w.GetName())) {
						reqs = append(reqs, request(k.Name, w.GetNamespace(), w.GetName()))
					}
					return nil
				})
				if err != nil {
					return nil, err
				}
			}
		}
		return reqs, nil
	}
}

// targetSecretOf indexes an ExternalSecret naming workloads by its target.
func targetSecretOf(o client.Object) []string {
	if es := o.(*esv1.ExternalSecret); len(es.Spec.RolloutRestartTargets) > 0 {
		return []string{es.TargetName()}
	}
	return nil
}

// targetWorkloadsOf indexes an ExternalSecret by the workloads it names.
func targetWorkloadsOf(o client.Object) []string {
	var out []string
	for _, t := range o.(*esv1.ExternalSecret).Spec.RolloutRestartTargets {
		out = append(out, t.Kind+"/"+t.Name)
	}
	return out
}

// askingFor maps one of eso's Secrets to the workloads asking for it.
func (r *Reconciler) askingFor(ctx context.Context, secret client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	in := client.InNamespace(secret.GetNamespace())
	for _, k := range workloads.Kinds {
		list := k.NewList()
		for _, key := range []string{secret.GetName(), anyPattern} {
			if err := r.Client.List(ctx, list, in, client.MatchingFields{indexAsked: key}); err != nil {
				continue // the cache is stopping
			}
			for _, o := range workloads.Items(list) {
				// Listed by name, it asks; listed as asking by pattern, it
				// asks if a pattern matches.
				if key != anyPattern || workloads.AskOf(k, o).Matches(secret.GetName()) {
					reqs = append(reqs, request(k.Name, o.GetNamespace(), o.GetName()))
				}
			}
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

// askedKeys are a workload's index keys: the names it asks for, and
// anyPattern if it asks by pattern.
func askedKeys(k workloads.Kind, o client.Object) []string {
	ask := workloads.AskOf(k, o)
	if len(ask.Patterns) > 0 {
		return append(slices.Clone(ask.Names), anyPattern)
	}
	return ask.Names
}

// dataHashChanged passes a Secret eso now holds with other data: created,
// or updated with another data-hash (or one the cache may not show, past
// its metadata bound); not a deletion (nothing to restart for) nor a
// change of anything else.
var dataHashChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return manager.CacheTrimmed(e.ObjectOld) || manager.CacheTrimmed(e.ObjectNew) ||
			e.ObjectOld.GetAnnotations()[esv1.AnnotationDataHash] != e.ObjectNew.GetAnnotations()[esv1.AnnotationDataHash]
	},
	DeleteFunc: func(event.DeleteEvent) bool { return false },
}

// askChanged passes a workload whose asking may have changed: created,
// or updated in what asks (see workloads.AsksAlike) or whether it is
// paused. The cache keeps nothing else of it, so a rollout's status updates
// pass nothing; nor does eso's own patch (its record, restartedAt).
func askChanged(k workloads.Kind) predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool { return !workloads.AsksAlike(k, e.ObjectOld, e.ObjectNew) },
		DeleteFunc: func(event.DeleteEvent) bool { return false },
	}
}
