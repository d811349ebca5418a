package pushsecret

import (
	"context"
	"time"

	"go.uber.org/fx"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/events"
	"github.com/eso-dev/eso/app/generation"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/referents"
	"github.com/eso-dev/eso/app/sharding"
	"github.com/eso-dev/eso/app/stores"
)

// indexStores indexes PushSecrets by the stores they push to: "<Kind>/<name>"
// for a store named, "<Kind>/*" for stores selected by labels.
const indexStores = "spec.secretStoreRefs"

func storeIndexValues(ps *esv1alpha1.PushSecret) []string {
	var out []string
	for _, ref := range ps.Spec.SecretStoreRefs {
		name := ref.Name
		if ref.LabelSelector != nil {
			name = "*"
		}
		out = append(out, kindOf(ref)+"/"+name)
	}
	return out
}

// Indexes are the PushSecret field indexes the controller registers, by
// field: a reconcile lists through indexClusterKeys, so whatever runs one
// (eso render's in-memory API server too) needs them.
func Indexes() map[string]client.IndexerFunc {
	return map[string]client.IndexerFunc{
		indexStores: func(o client.Object) []string { return storeIndexValues(o.(*esv1alpha1.PushSecret)) },
		indexClusterKeys: func(o client.Object) []string {
			return clusterKeyIndexValues(o.(*esv1alpha1.PushSecret))
		},
	}
}

// changed passes what can change what a PushSecret pushes: its spec, labels
// and annotations, and its deletion.
var changed = predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
	predicate.AnnotationChangedPredicate{}, predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
		},
	})

// SetupWithManager registers the controller: PushSecrets, the stores they
// push to (by index) and, through Sources, the Secrets they push.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	r.statusWrites.API = mgr.GetAPIReader()
	manager.OnRelease(mgr, func(works func(string) bool) {
		sharding.ForgetReleased(works, &r.checked)
		r.Sources.UnfollowReleased(works)
	})
	for field, extract := range Indexes() {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), &esv1alpha1.PushSecret{}, field, extract); err != nil {
			return err
		}
	}
	usersOf := func(kind string) handler.TypedMapFunc[client.Object, reconcile.Request] {
		return func(ctx context.Context, s client.Object) []reconcile.Request {
			var opts []client.ListOption
			if kind == stores.KindSecretStore {
				opts = append(opts, client.InNamespace(s.GetNamespace()))
			}
			var reqs []reconcile.Request
			for _, key := range []string{kind + "/" + s.GetName(), kind + "/*"} {
				var list esv1alpha1.PushSecretList
				if err := r.Client.List(ctx, &list, append(opts, client.MatchingFields{indexStores: key})...); err != nil {
					continue
				}
				for _, ps := range list.Items {
					reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&ps)})
				}
			}
			return reqs
		}
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("pushsecret").
		For(&esv1alpha1.PushSecret{}, builder.WithPredicates(changed)).
		WithOptions(manager.ControllerOptions(mgr, &esv1alpha1.PushSecret{}, controller.Options{MaxConcurrentReconciles: concurrency,
			RateLimiter: outcomes.RetryLimiter()}))
	// A store turning Ready, changing, or gaining the labels a selector
	// asks for changes what its PushSecrets can push.
	for _, api := range r.Resolver.APIs() {
		b = b.Watches(api.New(), handler.EnqueueRequestsFromMapFunc(usersOf(api.Kind)),
			builder.WithPredicates(predicate.Or[client.Object](api.Changed(), predicate.LabelChangedPredicate{})))
	}
	if r.Sources != nil {
		b = b.WatchesRawSource(r.Sources.Source())
	}
	return b.Complete(r)
}

// Module runs the PushSecret controller.
var Module = fx.Module("pushsecret-controller",
	fx.Invoke(func(mgr ctrl.Manager, resolver *stores.Resolver, generators *generation.Resolver, watcher *referents.Watcher, cfg config.Config) error {
		r := &Reconciler{
			Client:     mgr.GetClient(),
			APIReader:  mgr.GetAPIReader(),
			Resolver:   resolver,
			Generators: generators,
			Recorder:   events.Recorder(mgr),
			Sources:    watcher.NewQueue(),
			Now:        time.Now,
		}
		return r.SetupWithManager(mgr, cfg.Concurrency)
	}),
)
