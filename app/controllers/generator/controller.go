// Package generator reconciles Generators and ClusterGenerators: it validates
// the generator configuration they point at and reports it in their Ready
// condition, which gates the ExternalSecrets using them as a store's does.
package generator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/fx"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	"github.com/eso-dev/eso/apis/lenient"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/generation"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/referents"
	"github.com/eso-dev/eso/app/statuswrite"
	"github.com/eso-dev/eso/app/steps"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// Reconciler validates Generators or ClusterGenerators (Cluster says which).
type Reconciler struct {
	Client client.Client
	// Resolver finds the generator serving a configuration, in process or
	// in a provider process.
	Resolver *generation.Resolver
	Class    string
	Cluster  bool
	// Awaits re-queues a generator when the object its failure names (a
	// credentials Secret) arrives; nil checks again at the recheck only.
	Awaits *referents.Queue
	// statusWrites holds this controller's status writes its cache may not
	// show yet (statuswrite.Recent).
	statusWrites statuswrite.Recent
}

// generatorObject is what both kinds share.
type generatorObject struct {
	obj        client.Object
	spec       *genv2.GeneratorSpec
	status     *genv2.GeneratorStatus
	ref        plugin.Ref
	scope      plugin.Scope
	condsErr   error
	crossNSErr error
}

func (r *Reconciler) load(ctx context.Context, key client.ObjectKey) (*generatorObject, error) {
	if r.Cluster {
		var cg genv2.ClusterGenerator
		if err := r.statusWrites.Get(ctx, r.Client, key, &cg); err != nil {
			return nil, err
		}
		pr := cg.Spec.ProviderConfig.ProviderRef
		g := &generatorObject{obj: &cg, spec: &cg.Spec.GeneratorSpec, status: &cg.Status,
			ref: plugin.Ref{Kind: pr.Kind, Namespace: pr.Namespace, Name: pr.Name}, condsErr: stores.ValidateConditions(cg.Spec.Conditions)}
		if cg.Spec.AuthenticationScope != ssv2.ManifestNamespace {
			g.scope = plugin.Scope{Namespace: pr.Namespace}
		}
		return g, nil
	}
	var gen genv2.Generator
	if err := r.statusWrites.Get(ctx, r.Client, key, &gen); err != nil {
		return nil, err
	}
	pr := gen.Spec.ProviderConfig.ProviderRef
	g := &generatorObject{obj: &gen, spec: &gen.Spec, status: &gen.Status,
		ref: plugin.Ref{Kind: pr.Kind, Namespace: gen.Namespace, Name: pr.Name}, scope: plugin.Scope{Namespace: gen.Namespace}}
	if pr.Namespace != "" && pr.Namespace != gen.Namespace {
		g.crossNSErr = fmt.Errorf("a Generator may only use a generator configuration of its own namespace, not %s/%s", pr.Namespace, pr.Name)
	}
	return g, nil
}

// Reconcile validates the generator and writes its Ready condition when it changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	g, err := r.load(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if g.spec.Controller != r.Class {
		return ctrl.Result{}, nil
	}
	reason, message, failure := r.check(ctx, g)
	var transient error
	recheck := false
	if failure != nil {
		out := outcomes.Of(failure).ForStore()
		if out.StoreRetry == outcomes.Backoff {
			transient = failure
		}
		recheck = out.StoreRetry == outcomes.Recheck
	}
	if c := meta.FindStatusCondition(g.status.Conditions, ssv2.ConditionReady); transient != nil && c != nil && c.Status == metav1.ConditionTrue {
		// A generator that was Ready keeps that verdict through a blip; any
		// other shows the current cause (Unknown, which does not gate).
		return ctrl.Result{}, transient
	}
	before := g.status.DeepCopy()
	status := metav1.ConditionFalse
	switch {
	case reason == ssv2.ReasonValid:
		status = metav1.ConditionTrue
	case transient != nil:
		status = metav1.ConditionUnknown
	}
	meta.SetStatusCondition(&g.status.Conditions, metav1.Condition{Type: ssv2.ConditionReady, Status: status,
		Reason: reason, Message: message, ObservedGeneration: g.obj.GetGeneration()})
	g.status.ObservedGeneration = g.obj.GetGeneration()
	kind := generation.KindGenerator
	if r.Cluster {
		kind = generation.KindClusterGenerator
	}
	if _, err := statuswrite.IfChanged(ctx, r.Client, &r.statusWrites, g.obj, *before, generatorStatus, kind); err != nil {
		return ctrl.Result{}, err
	}
	if transient != nil {
		return ctrl.Result{}, transient
	}
	interval := 5 * time.Minute
	if g.spec.RefreshInterval != nil {
		interval = g.spec.RefreshInterval.Duration
	}
	if recheck {
		r.Awaits.Await(failure, req)
		if interval == 0 || interval > outcomes.RecheckInterval {
			interval = outcomes.RecheckInterval
		}
	}
	return ctrl.Result{RequeueAfter: interval}, nil
}

// generatorStatus is the status of either generator kind.
func generatorStatus(obj client.Object) *genv2.GeneratorStatus {
	if cg, ok := obj.(*genv2.ClusterGenerator); ok {
		return &cg.Status
	}
	return &obj.(*genv2.Generator).Status
}

// verdict is a generator's Ready reason and message, and the failure the
// outcomes table judges (nil when valid, or for a rule of its own).
type verdict struct {
	reason, message string
	failure         error
}

// validationStep is one check of a generator; nil when it passes.
type validationStep = steps.Step[*generatorObject, *verdict]

// validationSteps check a generator in order; the first failure decides
// its Ready reason.
func (r *Reconciler) validationSteps() []validationStep {
	return []validationStep{
		decodeGenerator,
		checkNamespace,
		checkConditions,
		r.validate,
	}
}

func failedWith(err error, message string) *verdict {
	return &verdict{reason: outcomes.Of(err).ForStore().StoreReason, message: message, failure: err}
}

// check runs the validation steps.
func (r *Reconciler) check(ctx context.Context, g *generatorObject) (reason, message string, failure error) {
	if v, _ := steps.Run(ctx, g, r.validationSteps()...); v != nil {
		return v.reason, v.message, v.failure
	}
	return ssv2.ReasonValid, "generator configuration " + g.ref.Kind + " " + g.ref.Namespace + "/" + g.ref.Name + " is valid", nil
}

// decodeGenerator refuses a generator whose spec did not decode.
func decodeGenerator(_ context.Context, g *generatorObject) (*verdict, error) {
	if err := lenient.Error(g.obj); err != nil {
		return failedWith(err, err.Error()), nil
	}
	return nil, nil
}

// checkNamespace refuses a Generator naming another namespace's
// configuration.
func checkNamespace(_ context.Context, g *generatorObject) (*verdict, error) {
	if g.crossNSErr != nil {
		return &verdict{reason: ssv2.ReasonCrossNamespaceRefused, message: g.crossNSErr.Error()}, nil
	}
	return nil, nil
}

// checkConditions checks a ClusterGenerator's namespace conditions.
func checkConditions(_ context.Context, g *generatorObject) (*verdict, error) {
	if g.condsErr != nil {
		return &verdict{reason: ssv2.ReasonInvalidConditions, message: g.condsErr.Error()}, nil
	}
	return nil, nil
}

// validate finds the generator serving the kind, in process or remote, and
// has it check the configuration.
func (r *Reconciler) validate(ctx context.Context, g *generatorObject) (*verdict, error) {
	gen, err := r.Resolver.ServedBy(g.spec, g.ref, g.obj.GetNamespace())
	switch {
	case errors.Is(err, generation.ErrUnknownKind):
		return failedWith(err, err.Error()), nil
	case errors.Is(err, stores.ErrNotCompiledIn):
		return failedWith(err, "generator kind "+g.ref.Kind+" is not compiled into this eso binary (see `eso providers`)"), nil
	case err != nil:
		return failedWith(err, err.Error()), nil
	}
	if err := gen.Validate(ctx, g.ref, g.scope); err != nil {
		return failedWith(err, err.Error()), nil
	}
	return nil, nil
}

// SetupWithManager watches the generators of this kind and every compiled-in
// generator configuration kind, so a configuration change revalidates at once.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.statusWrites.API = mgr.GetAPIReader()
	var obj client.Object = &genv2.Generator{}
	name := "generator"
	if r.Cluster {
		obj, name = &genv2.ClusterGenerator{}, "clustergenerator"
	}
	b := ctrl.NewControllerManagedBy(mgr).Named(name).
		For(obj, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(manager.ControllerOptions(mgr, obj, controller.Options{RateLimiter: outcomes.RetryLimiter()}))
	for _, reg := range r.Resolver.Plugins().Index().Registrations(plugin.RoleGenerator) {
		b = b.Watches(reg.NewConfig(), handler.EnqueueRequestsFromMapFunc(r.usersOf(reg.Kind)),
			builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	}
	if r.Awaits != nil {
		b = b.WatchesRawSource(r.Awaits.Source())
	}
	return b.Complete(r)
}

// usersOf maps a generator configuration to the generators of this kind
// pointing at it. Generators are few, so a list is cheaper than an index.
func (r *Reconciler) usersOf(kind string) handler.MapFunc {
	return func(ctx context.Context, cfg client.Object) []reconcile.Request {
		var reqs []reconcile.Request
		points := func(pr genv2.ProviderRef, namespace string) bool {
			return pr.Kind == kind && pr.Name == cfg.GetName() && namespace == cfg.GetNamespace()
		}
		if r.Cluster {
			var list genv2.ClusterGeneratorList
			if err := r.Client.List(ctx, &list); err != nil {
				return nil
			}
			for _, cg := range list.Items {
				if points(cg.Spec.ProviderConfig.ProviderRef, cg.Spec.ProviderConfig.ProviderRef.Namespace) {
					reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: cg.Name}})
				}
			}
			return reqs
		}
		var list genv2.GeneratorList
		if err := r.Client.List(ctx, &list, client.InNamespace(cfg.GetNamespace())); err != nil {
			return nil
		}
		for _, g := range list.Items {
			if points(g.Spec.ProviderConfig.ProviderRef, g.Namespace) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&g)})
			}
		}
		return reqs
	}
}

// Module runs the Generator and ClusterGenerator controllers.
var Module = fx.Module("generator-controllers",
	fx.Invoke(func(mgr ctrl.Manager, resolver *generation.Resolver, awaits *referents.Watcher, cfg config.Config) error {
		for _, cluster := range []bool{false, true} {
			r := &Reconciler{Client: mgr.GetClient(), Resolver: resolver, Class: cfg.ControllerClass, Cluster: cluster,
				Awaits: awaits.NewQueue()}
			if err := r.SetupWithManager(mgr); err != nil {
				return err
			}
		}
		return nil
	}),
)
