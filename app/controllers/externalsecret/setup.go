package externalsecret

import (
	"context"
	"time"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/events"
	"github.com/eso-dev/eso/app/generation"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/referents"
	"github.com/eso-dev/eso/app/refresh"
	"github.com/eso-dev/eso/app/sharding"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// syncTimeout bounds one reconcile, provider calls included.
const syncTimeout = time.Minute

// Cache indexes of ExternalSecrets, to find those affected by a change of a
// Secret, a store or a provider configuration without scanning them all.
const (
	indexTarget    = "spec.target.name"
	indexStore     = "spec.secretStoreRef"
	indexGenerator = "spec.dataFrom.sourceRef.generatorRef"
)

// storeIndexKey and generatorIndexKey identify a store for indexStore and a
// generator for indexGenerator; the cluster kinds have no namespace.
func storeIndexKey(kind, namespace, name string) string {
	return indexKey(kind, namespace, name, kind == stores.KindClusterSecretStore)
}

func generatorIndexKey(kind, namespace, name string) string {
	return indexKey(kind, namespace, name, kind == generation.KindClusterGenerator)
}

func indexKey(kind, namespace, name string, cluster bool) string {
	if cluster {
		namespace = ""
	}
	return stores.ProviderRefIndexKey(kind, namespace, name)
}

// targetIndex is indexTarget's value: the target of an ExternalSecret
// whose target is not of its own name. Most write a Secret of their own
// name, which needs no entry (see targeting), and an entry per
// ExternalSecret costs a set of its own.
func targetIndex(o client.Object) []string {
	es := o.(*esv1.ExternalSecret)
	if t := es.TargetName(); t != es.Name {
		return []string{t}
	}
	return nil
}

// storeIndex is indexStore's value: the stores an ExternalSecret reads.
func storeIndex(o client.Object) []string {
	es := o.(*esv1.ExternalSecret)
	var keys []string
	for _, ref := range stores.RefsOf(es) {
		keys = append(keys, refKey(es.Namespace, ref))
	}
	return keys
}

func setupIndexes(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &esv1.ExternalSecret{}, indexTarget, targetIndex); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &esv1.ExternalSecret{}, indexStore, storeIndex); err != nil {
		return err
	}
	return idx.IndexField(ctx, &esv1.ExternalSecret{}, indexGenerator, func(o client.Object) []string {
		es := o.(*esv1.ExternalSecret)
		var keys []string
		for _, df := range es.Spec.DataFrom {
			if df.SourceRef != nil && df.SourceRef.GeneratorRef != nil {
				g := df.SourceRef.GeneratorRef
				keys = append(keys, generatorIndexKey(g.Kind, es.Namespace, g.Name))
			}
		}
		return keys
	})
}

// SetupWithManager registers the controller. Its queue is a priority queue: new
// and edited objects go ahead of scheduled refreshes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, catalog *plugin.Index, concurrency int) error {
	r.statusWrites.API = mgr.GetAPIReader()
	if err := setupIndexes(context.Background(), mgr); err != nil {
		return err
	}
	manager.OnGain(mgr, r.tookOver)
	manager.OnRelease(mgr, func(works func(string) bool) {
		sharding.ForgetReleased(works, &r.synced, &r.repaired, &r.verified, &r.gained)
	})
	c := mgr.GetClient()
	b := ctrl.NewControllerManagedBy(mgr).
		Named("externalsecret").
		For(&esv1.ExternalSecret{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		// A provider that hangs may hold a worker for a minute at most.
		WithOptions(manager.ControllerOptions(mgr, &esv1.ExternalSecret{}, controller.Options{MaxConcurrentReconciles: concurrency, UsePriorityQueue: ptr.To(true),
			RateLimiter: outcomes.RetryLimiter(), ReconciliationTimeout: syncTimeout})).
		// The cache holds only Secrets labelled as eso's, as metadata only,
		// so this sees only those: a change of their data shows as a new
		// resourceVersion.
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, s client.Object) []reconcile.Request {
			return r.targeting(ctx, s.GetNamespace(), s.GetName())
		}), builder.WithPredicates(r.notOwnWrites())).
		// A generator turning Ready again lets its gated ExternalSecrets sync.
		Watches(&genv2.Generator{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, g client.Object) []reconcile.Request {
			return r.list(ctx, client.InNamespace(g.GetNamespace()),
				client.MatchingFields{indexGenerator: generatorIndexKey(generation.KindGenerator, g.GetNamespace(), g.GetName())})
		}), builder.WithPredicates(generatorChanged)).
		Watches(&genv2.ClusterGenerator{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, g client.Object) []reconcile.Request {
			return r.list(ctx, client.MatchingFields{indexGenerator: generatorIndexKey(generation.KindClusterGenerator, "", g.GetName())})
		}), builder.WithPredicates(generatorChanged)).
		// A namespace's labels decide whether ClusterSecretStore conditions admit it.
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, ns client.Object) []reconcile.Request {
			return r.usingClusterStores(ctx, ns.GetName())
		}), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		WatchesRawSource(r.Scheduler.Source())
	// Every store kind served, v1 included: the index key has no
	// apiVersion, so a store re-queues the ExternalSecrets naming it under
	// either API (those of the other API find nothing new).
	for _, api := range r.Resolver.APIs() {
		b = b.Watches(api.New(), r.storeEvents(api), builder.WithPredicates(api.Changed()))
	}
	if r.Awaits != nil {
		b = b.WatchesRawSource(r.Awaits.Source())
	}
	// A generator kind referenced directly (Password, UUID, ...) is its own
	// configuration: its creation or change requeues the ExternalSecrets
	// naming it, so one created before its generator converges by itself.
	if r.Generation != nil && r.Generation.Resolver != nil {
		for _, reg := range r.Generation.Resolver.Plugins().Index().Registrations(plugin.RoleGenerator) {
			kind := reg.Kind
			b = b.Watches(reg.NewConfig(), handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, cfg client.Object) []reconcile.Request {
				return r.list(ctx, client.InNamespace(cfg.GetNamespace()),
					client.MatchingFields{indexGenerator: generatorIndexKey(kind, cfg.GetNamespace(), cfg.GetName())})
			}), builder.WithPredicates(predicate.GenerationChangedPredicate{}))
		}
	}
	for _, reg := range catalog.Registrations(plugin.RoleProvider) {
		kind := reg.Kind
		b = b.Watches(reg.NewConfig(), handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, cfg client.Object) []reconcile.Request {
			found, err := stores.ForConfig(ctx, c, kind, cfg)
			if err != nil {
				return nil
			}
			var reqs []reconcile.Request
			for _, s := range found {
				opts := []client.ListOption{client.MatchingFields{indexStore: storeIndexKey(s.Kind, s.Namespace, s.Name)}}
				if s.Namespace != "" {
					opts = append(opts, client.InNamespace(s.Namespace))
				}
				reqs = append(reqs, r.list(ctx, opts...)...)
			}
			return reqs
		}), builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	}
	return b.Complete(r)
}

// list requeues the ExternalSecrets opts select. The map functions only read
// their names, so the list shares the cache's objects instead of copying
// each: a namespace's or a store's events in a first sync would otherwise
// copy every ExternalSecret of the namespace once more.
func (r *Reconciler) list(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	return r.listWhere(ctx, nil, opts...)
}

// listWhere is list of the ExternalSecrets keep accepts (all when nil).
func (r *Reconciler) listWhere(ctx context.Context, keep func(*esv1.ExternalSecret) bool, opts ...client.ListOption) []reconcile.Request {
	var list esv1.ExternalSecretList
	if err := r.Client.List(ctx, &list, append(opts, client.UnsafeDisableDeepCopy)...); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		if keep == nil || keep(&list.Items[i]) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// storeEvents requeues the ExternalSecrets using a store of api's kind
// when it changes (api.Changed passes only the events that can change what
// they do). A store's first check finding it Ready (api.FoundReady) changes
// nothing for those already Ready, so only the others are requeued: in a
// first sync, where stores are checked beside their ExternalSecrets, every
// ExternalSecret synced before its store's first check was otherwise
// reconciled once more.
func (r *Reconciler) storeEvents(api stores.API) handler.EventHandler {
	using := func(keep func(*esv1.ExternalSecret) bool) handler.EventHandler {
		return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, s client.Object) []reconcile.Request {
			opts := []client.ListOption{client.MatchingFields{indexStore: storeIndexKey(api.Kind, s.GetNamespace(), s.GetName())}}
			if !api.Cluster() {
				opts = append(opts, client.InNamespace(s.GetNamespace()))
			}
			return r.listWhere(ctx, keep, opts...)
		})
	}
	all := using(nil)
	notReady := using(func(es *esv1.ExternalSecret) bool {
		return !meta.IsStatusConditionTrue(es.Status.Conditions, esv1.ConditionReady)
	})
	return handler.Funcs{
		CreateFunc:  all.Create,
		DeleteFunc:  all.Delete,
		GenericFunc: all.Generic,
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if api.FoundReady(e.ObjectOld, e.ObjectNew) {
				notReady.Update(ctx, e, q)
				return
			}
			all.Update(ctx, e, q)
		},
	}
}

// targeting lists the ExternalSecrets that may write the Secret
// namespace/name: those whose target names it (indexTarget) and the one of
// its name, whose target it is unless it names another; that one is
// requeued without looking, as a reconcile with nothing due writes nothing.
func (r *Reconciler) targeting(ctx context.Context, namespace, name string) []reconcile.Request {
	reqs := r.list(ctx, client.InNamespace(namespace), client.MatchingFields{indexTarget: name})
	return append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}})
}

// usingClusterStores lists the ExternalSecrets of namespace that use a
// ClusterSecretStore, reading the cache's objects in place as list does.
func (r *Reconciler) usingClusterStores(ctx context.Context, namespace string) []reconcile.Request {
	var list esv1.ExternalSecretList
	if err := r.Client.List(ctx, &list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		es := &list.Items[i]
		for _, ref := range stores.RefsOf(es) {
			if ref.Kind == stores.KindClusterSecretStore {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(es)})
				break
			}
		}
	}
	return reqs
}

// generatorChanged passes the generator events that can change what its
// ExternalSecrets do.
var generatorChanged = stores.ReadyChanged(func(o client.Object) []metav1.Condition {
	switch g := o.(type) {
	case *genv2.Generator:
		return g.Status.Conditions
	case *genv2.ClusterGenerator:
		return g.Status.Conditions
	}
	return nil
})

// Module runs the ExternalSecret controller.
var Module = fx.Module("externalsecret-controller",
	fx.Provide(refresh.NewScheduler),
	fx.Invoke(func(mgr ctrl.Manager, resolver *stores.Resolver, runner *generation.Runner, scheduler *refresh.Scheduler, awaits *referents.Watcher,
		catalog *plugin.Index, cfg config.Config) error {
		r := &Reconciler{
			Client:         mgr.GetClient(),
			APIReader:      mgr.GetAPIReader(),
			SecretMetadata: mgr.GetCache(),
			Resolver:       resolver,
			Generation:     runner,
			Recorder:       events.Recorder(mgr),
			Scheduler:      scheduler,
			Awaits:         awaits.NewQueue(),
			Now:            time.Now,
		}
		return r.SetupWithManager(mgr, catalog, cfg.Concurrency)
	}),
)
