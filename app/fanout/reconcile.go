package fanout

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/events"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/shardcache"
	"github.com/eso-dev/eso/app/sharding"
	"github.com/eso-dev/eso/app/statuswrite"
)

// Kind is what the shared reconcile needs of one parent kind P, whose
// status is S and whose children are C: how to read a parent, what it
// selects and where the outcome goes in its status.
type Kind[P client.Object, S any, C client.Object] struct {
	// Name is the parent's kind, e.g. "ClusterExternalSecret".
	Name string
	// New returns an empty parent; Status its status.
	New    func() P
	Status func(P) *S
	// Conditions returns the conditions of a status.
	Conditions func(*S) *[]metav1.Condition
	// Invalid, if set, says why a parent's spec cannot be read: the parent
	// selects nothing until it is edited.
	Invalid func(P) error
	// Selects returns the namespace selectors and names a parent selects.
	Selects func(P) ([]*metav1.LabelSelector, []string)
	// Children returns a parent's children.
	Children func(P) Children[C]
	// Record writes a spread's outcome into the status: the children's
	// name, the namespaces provisioned and those that failed.
	Record func(status *S, child string, spread Spread)
	// Interval is how often a parent is reconciled besides its watches.
	Interval func(P) time.Duration
	// Passed are the parent's changes, besides a spec change, that
	// reconcile it.
	Passed []predicate.Predicate
	// NewList returns an empty list of parents.
	NewList func() client.ObjectList
}

// Reconciler reconciles the parents of one kind.
type Reconciler[P client.Object, S any, C client.Object] struct {
	Kind     Kind[P, S, C]
	Client   client.Client
	Recorder record.EventRecorder
	// Uncached, set with --shards auto (see ShardedReads), reads children
	// from the API server.
	Uncached client.Reader
	// checked is, by parent (its request's key), the children its last
	// reconcile found as it says (ShardedReads.Before).
	checked sync.Map
	// statusWrites holds this controller's status writes its cache may not
	// show yet (statuswrite.Recent).
	statusWrites statuswrite.Recent
}

// Reconcile brings a parent's children in line with the namespaces it
// selects and records the outcome in its status.
func (r *Reconciler[P, S, C]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	k := r.Kind
	parent := k.New()
	if err := r.statusWrites.Get(ctx, r.Client, req.NamespacedName, parent); err != nil {
		if apierrors.IsNotFound(err) {
			r.checked.Delete(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err) // its children go with it (garbage collection)
	}
	if !parent.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	before := *k.Status(parent.DeepCopyObject().(P))
	status := k.Status(parent)
	if k.Invalid != nil {
		if err := k.Invalid(parent); err != nil {
			meta.SetStatusCondition(k.Conditions(status), NotReady(parent, esv1.ReasonInvalidSpec, err.Error()))
			return ctrl.Result{}, r.writeStatus(ctx, parent, before)
		}
	}
	ch := k.Children(parent)
	if r.Uncached != nil && ch.Label != "" {
		// Children without the owner label (ClusterPushSecret's) are of
		// a kind every replica caches whole: nothing to read past it.
		before, _ := r.checked.Load(req.NamespacedName)
		ch.Sharded = &ShardedReads{Uncached: r.Uncached, After: map[types.UID]Checked{}}
		ch.Sharded.Before, _ = before.(map[types.UID]Checked)
	}
	selectors, names := k.Selects(parent)
	spread, ready, err := ch.SpreadOver(ctx, r.Client, selectors, names)
	if ch.Sharded != nil {
		r.checked.Store(req.NamespacedName, ch.Sharded.After)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	meta.SetStatusCondition(k.Conditions(status), ready)
	if spread == nil {
		return ctrl.Result{}, r.writeStatus(ctx, parent, before)
	}
	k.Record(status, ch.Name, *spread)
	if err := r.writeStatus(ctx, parent, before); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: k.Interval(parent)}, nil
}

// writeStatus writes parent's status only when it changed from before,
// with a Warning event when it is not Ready.
func (r *Reconciler[P, S, C]) writeStatus(ctx context.Context, parent P, before S) error {
	status := func(o client.Object) *S { return r.Kind.Status(o.(P)) }
	wrote, err := statuswrite.IfChanged(ctx, r.Client, &r.statusWrites, parent, before, status, r.Kind.Name)
	if err != nil || !wrote {
		return err
	}
	conditions := *r.Kind.Conditions(r.Kind.Status(parent))
	if ready := meta.FindStatusCondition(conditions, esv1.ConditionReady); ready != nil && ready.Status != metav1.ConditionTrue {
		r.Recorder.Event(parent, corev1.EventTypeWarning, ready.Reason, ready.Message)
	}
	return nil
}

// SetupWithManager registers the controller of the kind with mgr, named
// after the kind, and the controller index of its children when they carry
// no owner label. A parent is reconciled on a spec change and what Passed
// lets through; its children's edits are reverted and deletions repaired;
// a namespace change re-queues every parent.
func (r *Reconciler[P, S, C]) SetupWithManager(mgr ctrl.Manager) error {
	r.statusWrites.API = mgr.GetAPIReader()
	ch := r.Kind.Children(r.Kind.New())
	child := ch.New()
	if ch.Label == "" {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), child, IndexController, ControllerUID); err != nil {
			return err
		}
	}
	// With --shards auto, children that carry the owner label are watched
	// as metadata: their own kind is cached only in the namespaces this
	// replica works, their metadata everywhere (manager.CacheOptions).
	owns := []builder.OwnsOption{builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{},
		predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))}
	if r.Uncached != nil && ch.Label != "" {
		owns = append(owns, builder.OnlyMetadata)
	}
	passed := predicate.Or(append([]predicate.Predicate{predicate.GenerationChangedPredicate{}}, r.Kind.Passed...)...)
	return ctrl.NewControllerManagedBy(mgr).
		For(r.Kind.New(), builder.WithPredicates(passed)).
		Owns(child, owns...).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(RequeueAll(mgr.GetClient(), r.Kind.NewList)),
			builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, predicate.GenerationChangedPredicate{}))).
		WithOptions(manager.ControllerOptions(mgr, r.Kind.New(), controller.Options{})).
		Complete(r)
}

// Reconciler returns the reconciler of the kind, reading and writing
// through c and recording events with rec.
func (k Kind[P, S, C]) Reconciler(c client.Client, rec record.EventRecorder) *Reconciler[P, S, C] {
	return &Reconciler[P, S, C]{Kind: k, Client: c, Recorder: rec}
}

// Run registers the controller of the kind with mgr, with mgr's client and
// event recorder.
func (k Kind[P, S, C]) Run(mgr ctrl.Manager) error {
	r := k.Reconciler(mgr.GetClient(), events.Recorder(mgr))
	if _, sharded := mgr.GetCache().(*shardcache.Cache); sharded {
		r.Uncached = mgr.GetAPIReader()
		// Another replica works the parents given up: forget their children.
		manager.OnRelease(mgr, func(works func(string) bool) { sharding.ForgetReleased(works, &r.checked) })
	}
	return r.SetupWithManager(mgr)
}
