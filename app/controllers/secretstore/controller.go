// Package secretstore reconciles SecretStores and ClusterSecretStores: it
// resolves each store's provider, validates the provider configuration and
// reports the result as the store's Ready condition, which gates the
// ExternalSecrets using the store.
package secretstore

import (
	"context"
	"fmt"
	"path"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
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
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/events"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/metrics"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/referents"
	"github.com/eso-dev/eso/app/statuswrite"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// Reconciler reconciles one kind of store (SecretStore or ClusterSecretStore
// of one apiVersion).
type Reconciler struct {
	Client   client.Client
	Resolver *stores.Resolver
	Recorder record.EventRecorder
	// API is the store kind reconciled.
	API stores.API
	// Awaits re-queues a store when the object its failure names (a
	// credentials Secret) arrives; nil checks again at the recheck only.
	Awaits *referents.Queue
	// statusWrites holds this controller's status writes its cache may not
	// show yet (statuswrite.Recent).
	statusWrites statuswrite.Recent
}

// Reconcile validates the store and writes its Ready condition when it changed.
func (c *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := c.API.New()
	if err := c.statusWrites.Get(ctx, c.Client, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			c.Resolver.Clients().Forget(ctx, stores.CacheKind(c.API.Kind, c.API.APIVersion), req.Namespace, req.Name)
			metrics.ForgetStore(req.Name, req.Namespace)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	store := c.API.Wrap(obj)
	if !c.Resolver.OwnsClass(store) {
		return ctrl.Result{}, nil
	}

	before := store.Status.DeepCopy()
	result := c.checkReady(ctx, store)
	if result.transient != nil {
		// Validation could not finish (the provider or the API server is
		// unreachable): a store that was Ready keeps that verdict rather than
		// gate every ExternalSecret on a blip, and is retried with backoff.
		// Any other store shows the current cause as Unknown, which does not
		// gate: never an old reason that no longer holds.
		if c := meta.FindStatusCondition(store.Status.Conditions, ssv2.ConditionReady); c != nil && c.Status == metav1.ConditionTrue {
			return ctrl.Result{}, result.transient
		}
		setUnknownCondition(store.Status, store.Generation, result)
	} else {
		setReadyCondition(store.Status, store.Generation, result)
	}
	if err := c.writeStatus(ctx, obj, before, store); err != nil {
		return ctrl.Result{}, err
	}
	c.recordTransition(ctx, obj, before, result)

	if result.transient != nil {
		return ctrl.Result{}, result.transient
	}
	d := refreshInterval(store)
	if result.recheck {
		c.Awaits.Await(result.cause, req)
		if d == 0 || d > outcomes.RecheckInterval {
			d = outcomes.RecheckInterval
		}
	}
	if d > 0 {
		return ctrl.Result{RequeueAfter: d}, nil
	}
	return ctrl.Result{}, nil
}

// writeStatus patches the status only when it differs from what was read.
func (c *Reconciler) writeStatus(ctx context.Context, obj client.Object, before *ssv2.SecretStoreStatus, store *stores.Store) error {
	if store.Cluster != nil {
		metrics.ClusterStores.SetConditions(store.Status.Conditions, store.Name, "")
	} else {
		metrics.Stores.SetConditions(store.Status.Conditions, store.Name, store.Namespace)
	}
	_, err := statuswrite.IfChanged(ctx, c.Client, &c.statusWrites, obj, *before, c.API.Status, store.Kind)
	return err
}

// recordTransition emits one Event when the Ready reason changes, not one per
// reconcile.
func (c *Reconciler) recordTransition(ctx context.Context, obj client.Object, before *ssv2.SecretStoreStatus, r readiness) {
	prev := meta.FindStatusCondition(before.Conditions, ssv2.ConditionReady)
	if prev != nil && prev.Reason == r.reason && prev.Message == r.message {
		return
	}
	if prev == nil || prev.Reason != r.reason {
		// One line per change of state, not per retry (those are at debug).
		if r.ready() {
			logr.FromContextOrDiscard(ctx).Info("store is ready", "reason", r.reason)
		} else {
			logr.FromContextOrDiscard(ctx).Info("store is not ready", "reason", r.reason, "message", r.message)
		}
	}
	eventType := corev1.EventTypeNormal
	if !r.ready() {
		eventType = corev1.EventTypeWarning
	}
	c.Recorder.Event(obj, eventType, r.reason, r.message)
}

func refreshInterval(s *stores.Store) time.Duration {
	if s.Spec.RefreshInterval == nil {
		return 5 * time.Minute
	}
	return s.Spec.RefreshInterval.Duration
}

// SetupWithManager watches the stores of c.API and every compiled-in provider
// configuration kind, so a configuration change revalidates its stores at once.
func (c *Reconciler) SetupWithManager(mgr ctrl.Manager, catalog *plugin.Index, concurrency int) error {
	c.statusWrites.API = mgr.GetAPIReader()
	name := c.API.Kind
	if c.API.APIVersion != esv1.StoreAPIVersionV2Alpha1 {
		name += "-" + path.Base(c.API.APIVersion)
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(c.API.New(), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(manager.ControllerOptions(mgr, c.API.New(), controller.Options{MaxConcurrentReconciles: concurrency, RateLimiter: outcomes.RetryLimiter()}))
	if c.Awaits != nil {
		b = b.WatchesRawSource(c.Awaits.Source())
	}
	for _, reg := range catalog.Registrations(plugin.RoleProvider) {
		kind := reg.Kind
		b = b.Watches(reg.NewConfig(), handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, cfg client.Object) []reconcile.Request {
			found, err := stores.ForConfig(ctx, mgr.GetClient(), kind, cfg)
			if err != nil {
				mgr.GetLogger().Error(err, "listing stores of provider configuration", "kind", kind, "name", cfg.GetName())
				return nil
			}
			var reqs []reconcile.Request
			for _, s := range found {
				if s.Kind == c.API.Kind && s.APIVersion == c.API.APIVersion {
					reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: s.Namespace, Name: s.Name}})
				}
			}
			return reqs
		}), builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	}
	return b.Complete(c)
}

// Module runs the SecretStore and ClusterSecretStore controllers.
var Module = fx.Module("secretstore-controllers",
	fx.Invoke(func(mgr ctrl.Manager, resolver *stores.Resolver, catalog *plugin.Index, awaits *referents.Watcher, cfg config.Config) error {
		for _, api := range resolver.APIs() {
			r := &Reconciler{Client: mgr.GetClient(), Resolver: resolver, Recorder: events.Recorder(mgr), API: api,
				Awaits: awaits.NewQueue()}
			if err := r.SetupWithManager(mgr, catalog, cfg.StoreConcurrency); err != nil {
				return fmt.Errorf("setting up %s %s controller: %w", api.APIVersion, api.Kind, err)
			}
		}
		return nil
	}),
)
