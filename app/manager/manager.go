// Package manager builds the controller-runtime manager eso's controllers run
// in and ties its life to the fx application.
package manager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/fx"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcfg "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/shardcache"
	"github.com/eso-dev/eso/app/sharding"
	"github.com/eso-dev/eso/app/workloads"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/sdk/logging"
	"github.com/eso-dev/eso/sdk/server"
)

// SchemeAdders are the API types optional modules register (fx value group
// "scheme"), e.g. the v1 stores of the compatibility layer.
type SchemeAdders struct {
	fx.In
	Adders []func(*runtime.Scheme) error `group:"scheme"`
}

// NewScheme registers the Kubernetes types eso uses (core, leases, token
// requests), eso's APIs, those of optional modules and the configuration
// kinds of every compiled-in provider and generator. Registering only what is
// used keeps start-up and memory small.
func NewScheme(catalog *plugin.Index, optional SchemeAdders) (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	adders := []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, coordinationv1.AddToScheme, authenticationv1.AddToScheme, authorizationv1.AddToScheme,
		esv1.AddToScheme, esv1alpha1.AddToScheme, ssv2.AddToScheme, genv2.AddToScheme,
	}
	adders = append(adders, optional.Adders...)
	for _, r := range catalog.All() {
		adders = append(adders, r.AddToScheme)
	}
	for _, add := range adders {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// RESTConfig loads the API server connection as every eso process does
// (server.RESTConfig): --kubeconfig, else $KUBECONFIG, in-cluster config or
// ~/.kube/config.
func RESTConfig(cfg config.Config) (*rest.Config, error) { return server.RESTConfig(cfg.Kubeconfig) }

// WithClientLimits copies rc with userAgent and client-side rate
// limits. As everywhere in client-go, the limit applies per resource client
// (Secrets, ExternalSecrets, Leases, ... each get their own bucket), so a
// burst of Secret writes never starves the leader election's lease renewals.
// A QPS of 0 turns client-side limiting off and leaves it to the API server's
// priority and fairness, as controller-runtime does by default.
func WithClientLimits(rc *rest.Config, cfg config.Config, userAgent string) *rest.Config {
	rc = rest.CopyConfig(rc)
	rc.UserAgent = userAgent
	if cfg.ClientQPS > 0 {
		rc.QPS, rc.Burst = float32(cfg.ClientQPS), cfg.ClientBurst
	} else {
		rc.QPS = -1
	}
	return rc
}

// clusterExternalSecretChildren selects the ExternalSecrets that carry a
// ClusterExternalSecret's owner label: the children it finds and watches.
var clusterExternalSecretChildren = func() labels.Selector {
	has, err := labels.NewRequirement(esv1.LabelClusterExternalSecret, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*has)
}()

// ownConnection gives a client of rc connections of its own. client-go
// shares one transport, and so its HTTP/2 connections, among all clients
// of one TLS configuration: Lease renewals would queue behind the
// informers' Lists and watches, which at a replica's start are a thousand
// at once, and a replica that misses its renew deadline stops working.
func ownConnection(rc *rest.Config) *rest.Config {
	c := rest.CopyConfig(rc)
	c.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return c
}

func newExternalSecretMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(esv1.GroupVersion.WithKind("ExternalSecret"))
	return m
}

// CacheOptions keeps the informer cache small: of Secrets it holds only those
// labelled as eso's, never every Secret of the cluster, and of those only
// metadata, trimmed to what eso reads (TrimSecret): anyone who may create a
// Secret may set the label. No cached object keeps its managedFields, which
// eso never reads: they were a third of a cached ExternalSecret. (An Update
// without them leaves them as they are on the API server.)
func CacheOptions(cfg config.Config) cache.Options {
	opts := cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			NewSecretMetadata(): {
				Label:     labels.SelectorFromSet(labels.Set{esv1.LabelManaged: esv1.LabelManagedValue}),
				Transform: TrimSecret,
			},
		},
	}
	if cfg.Sharded() {
		// Of ExternalSecrets' metadata, only ClusterExternalSecrets'
		// children are cached, cluster-wide (fanout.ShardedReads). Only
		// with sharding: controller-runtime keys these options by kind, not
		// form, and the typed ExternalSecrets then go to another cache.
		opts.ByObject[newExternalSecretMetadata()] = cache.ByObject{Label: clusterExternalSecretChildren}
	}
	if cfg.RolloutRestarts {
		for _, k := range workloads.Kinds {
			opts.ByObject[k.New()] = cache.ByObject{Transform: workloads.Trim}
		}
	}
	if namespaces := cfg.Namespaces(); len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// MetricsOptions serves metrics on cfg.MetricsAddr; with --metrics-secure
// over HTTPS (a self-signed certificate) and only to callers the API server
// authenticates and authorizes, as a scrape of a shared cluster should be.
func MetricsOptions(cfg config.Config) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: cfg.MetricsAddr}
	if cfg.MetricsSecure {
		opts.SecureServing = true
		opts.FilterProvider = authorizeMetrics
	}
	return opts
}

// readyWait bounds how long /readyz waits for the informer caches.
const readyWait = time.Second

// New builds the manager. /readyz waits for its informer caches and its
// controllers, /healthz fails when a controller's workers are stuck (see
// Health); controllers join both through ControllerOptions.
func New(cfg config.Config, rc *rest.Config, scheme *runtime.Scheme) (ctrl.Manager, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return nil, err
	}
	// A signal while waiting stops eso at once, not after the wait.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = waitForKinds(ctx, dc, scheme, crdWait)
	stop()
	if err != nil {
		return nil, err
	}
	// With --shards auto, no write leaves eso while its shard Lease is
	// past its renew deadline (sharding.WriteGuard).
	var shards *sharding.Coordinator
	var singles *singletons
	var mgr ctrl.Manager
	if cfg.Sharded() {
		if shards, err = newCoordinator(cfg, rc, func() ctrl.Manager { return mgr }); err != nil {
			return nil, err
		}
		if singles, err = newSingletons(cfg, rc, shards.ID()); err != nil {
			return nil, err
		}
		rc = rest.CopyConfig(rc)
		rc.Wrap(shards.WriteGuard)
	}
	var newCache cache.NewCacheFunc // controller-runtime's
	if shards != nil {
		newCache = newShardCache
	}
	mgr, err = ctrl.NewManager(WithClientLimits(rc, cfg, "eso"), ctrl.Options{
		Scheme:                 scheme,
		MapperProvider:         newRESTMapper,
		Cache:                  CacheOptions(cfg),
		NewCache:               newCache,
		Client:                 client.Options{Cache: &client.CacheOptions{DisableFor: uncached()}},
		Metrics:                MetricsOptions(cfg),
		HealthProbeBindAddress: cfg.HealthAddr,
		// With --shards auto the controllers run on every replica, and
		// singletons (issuing certificates) hold an election of their own.
		LeaderElection:                cfg.LeaderElect && !cfg.Sharded(),
		LeaderElectionID:              cfg.LeaderElectionID,
		LeaderElectionNamespace:       cfg.LeaderElectionNS,
		LeaderElectionConfig:          ownConnection(WithClientLimits(rc, cfg, "eso-leader")),
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &cfg.LeaderElectionLease,
		RenewDeadline:                 &cfg.LeaderElectionRenew,
		RetryPeriod:                   &cfg.LeaderElectionRetry,
		Controller:                    ctrlcfg.Controller{SkipNameValidation: &cfg.SkipControllerNameValidation},
		// One line per state change, logged by eso's controllers, not one
		// per retry of a failing object.
		Logger: logging.DemoteReconcileErrors(ctrl.Log),
		// Off ("0") unless --pprof-bind-address is given.
		PprofBindAddress: cfg.PprofAddr,
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	health := newHealth(cfg.LeaderElect && !cfg.Sharded(), mgr.Elected())
	if shards != nil {
		shards.CacheWith(mgr.GetCache().(*shardcache.Cache))
		shards.OnRelease(forgetReleasedSeries)
		if err := mgr.Add(shards); err != nil {
			return nil, err
		}
		if err := mgr.Add(singles); err != nil {
			return nil, err
		}
	}
	if cfg.HealthAddr != "0" {
		if err := mgr.AddHealthzCheck("workers", health.Live); err != nil {
			return nil, err
		}
		if err := mgr.AddReadyzCheck("informers", func(req *http.Request) error {
			// Answer at once: a probe must not hang on a cache that cannot
			// sync (e.g. a kind eso may not list).
			ctx, cancel := context.WithTimeout(req.Context(), readyWait)
			defer cancel()
			if !mgr.GetCache().WaitForCacheSync(ctx) {
				return errors.New("informer caches not synced")
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if err := mgr.AddReadyzCheck("controllers", health.Ready); err != nil {
			return nil, err
		}
	}
	return &healthManager{Manager: mgr, health: health, shards: shards, singletons: singles}, nil
}

// ProviderDeps gives in-process providers the manager's clients.
func ProviderDeps(mgr ctrl.Manager, cfg config.Config) plugin.Deps {
	return plugin.Deps{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), RESTConfig: mgr.GetConfig(),
		AmbientCredentials: cfg.AllowAmbientCredentials}
}

// run starts the manager with the fx application and stops it with it. A
// manager that fails on its own shuts the application down with an error.
func run(lc fx.Lifecycle, mgr ctrl.Manager, shutdowner fx.Shutdowner) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			go func() {
				err := mgr.Start(ctx)
				done <- err
				if err != nil {
					ctrl.Log.Error(err, "manager stopped")
					_ = shutdowner.Shutdown(fx.ExitCode(1))
				} else if ctx.Err() == nil {
					_ = shutdowner.Shutdown()
				}
			}()
			return nil
		},
		OnStop: func(stopCtx context.Context) error {
			cancel()
			select {
			case err := <-done:
				return err
			case <-stopCtx.Done():
				return stopCtx.Err()
			}
		},
	})
}

// Module provides the manager, its clients and the provider dependencies, and
// runs the manager for the life of the application. It needs a *rest.Config
// (RESTConfig in a real process, a test control plane in tests).
var Module = fx.Module("manager",
	fx.Provide(
		NewScheme,
		New,
		ProviderDeps,
		func(mgr ctrl.Manager) client.Client { return mgr.GetClient() },
	),
	fx.Invoke(run),
)
