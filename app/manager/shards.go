package manager

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/metrics"
	"github.com/eso-dev/eso/app/shardcache"
	"github.com/eso-dev/eso/app/sharding"
)

// shardedKinds are the kinds a replica of --shards auto caches only in the
// namespaces its claim gives it (app/shardcache): those there are one or
// more of per ExternalSecret. Every other kind is few, cluster-scoped, or
// read across namespaces: PushSecrets stay cluster-wide, since whether a
// remote key is already held by another PushSecret is judged over all of
// them. ExternalSecrets are sharded in their full form only; the metadata
// of ClusterExternalSecrets' children is cached cluster-wide (CacheOptions).
func shardedKinds(gvk schema.GroupVersionKind, metadataOnly bool) bool {
	switch gvk {
	case esv1.GroupVersion.WithKind("ExternalSecret"), genv2.GroupVersion.WithKind("GeneratorState"):
		return !metadataOnly
	case SecretGVK:
		return metadataOnly
	}
	return false
}

// forgetReleasedSeries drops the per-object metric series of what this
// replica gave up: the new owner reports them, and a sum over replicas
// must count each object once.
func forgetReleasedSeries(works func(key string) bool) {
	keep := func(name, namespace string) bool { return works(sharding.Key(namespace, name)) }
	for _, o := range []*metrics.Objects{metrics.ExternalSecrets, metrics.Stores, metrics.ClusterStores, metrics.PushSecrets} {
		o.Retain(keep)
	}
}

// newShardCache is the manager's cache with --shards auto.
var newShardCache = shardcache.NewCacheFunc(shardedKinds)

// newCoordinator builds this replica's ring membership for --shards auto:
// its Lease sits beside the leader election's, with the same durations.
// mgr returns the manager, built after the coordinator (its clients write
// through the coordinator's WriteGuard); its cache lists the namespaces.
func newCoordinator(cfg config.Config, rc *rest.Config, mgr func() ctrl.Manager) (*sharding.Coordinator, error) {
	cs, err := kubernetes.NewForConfig(ownConnection(WithClientLimits(rc, cfg, "eso-shards")))
	if err != nil {
		return nil, err
	}
	namespace := leaseNamespace(cfg)
	id, err := memberID()
	if err != nil {
		return nil, err
	}
	scfg := sharding.Config{
		Namespace: namespace, Ring: cfg.LeaderElectionID, ID: id,
		LeaseDuration: cfg.LeaderElectionLease, RenewDeadline: cfg.LeaderElectionRenew, RetryPeriod: cfg.LeaderElectionRetry,
	}
	namespaces := func(ctx context.Context) ([]string, error) {
		if fixed := cfg.Namespaces(); len(fixed) > 0 {
			return fixed, nil
		}
		var list corev1.NamespaceList
		if err := mgr().GetCache().List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		out := make([]string, len(list.Items))
		for i := range list.Items {
			out[i] = list.Items[i].Name
		}
		return out, nil
	}
	return sharding.NewCoordinator(scfg, cs.CoordinationV1().Leases(namespace), namespaces, ctrl.Log.WithName("shards"))
}

// newSingletons holds, for --shards auto, the election of the replica that
// runs the singleton tasks: on the Lease the manager's own election would
// use, with the shard member's ID as holder.
func newSingletons(cfg config.Config, rc *rest.Config, id string) (*singletons, error) {
	cs, err := kubernetes.NewForConfig(ownConnection(WithClientLimits(rc, cfg, "eso-singletons")))
	if err != nil {
		return nil, err
	}
	namespace := leaseNamespace(cfg)
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, namespace, cfg.LeaderElectionID,
		cs.CoreV1(), cs.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return nil, err
	}
	return newSingletonGroup(lock, cfg.LeaderElectionLease, cfg.LeaderElectionRenew, cfg.LeaderElectionRetry,
		ctrl.Log.WithName("singletons")), nil
}

// leaseNamespace is where the shard Leases and the singletons' Lease live:
// the leader election's namespace, by default eso's own.
func leaseNamespace(cfg config.Config) string {
	if cfg.LeaderElectionNS != "" {
		return cfg.LeaderElectionNS
	}
	return cfg.SystemNamespace
}

var notInName = regexp.MustCompile(`[^a-z0-9-]+`)

// memberID names this process in the ring: its Pod's name ($POD_NAME, else
// the host name) and a random suffix, so a restarted container is a new
// member and never mistaken for the one before it.
func memberID() (string, error) {
	base := os.Getenv("POD_NAME")
	if base == "" {
		base, _ = os.Hostname()
	}
	base = strings.Trim(notInName.ReplaceAllString(strings.ToLower(base), "-"), "-")
	if len(base) > 200 {
		base = base[:200]
	}
	if base == "" {
		base = "eso"
	}
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		return "", err
	}
	return fmt.Sprintf("eso-shard-%s-%s", base, hex.EncodeToString(suffix)), nil
}

// shardLister lists, from cache, the objects of reconciles' kind whose ring
// key keep accepts, as requests: what a controller queues when its replica
// gains namespaces. Given the namespaces gained, it lists those alone (none
// for a cluster-scoped kind). nil when reconciles is.
func shardLister(cache client.Reader, scheme *runtime.Scheme, mapper meta.RESTMapper, reconciles client.Object) sharding.Lister {
	if reconciles == nil {
		return nil
	}
	gvk, err := apiutil.GVKForObject(reconciles, scheme)
	if err != nil {
		return nil
	}
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	return func(ctx context.Context, namespaces []string, keep func(string) bool) ([]reconcile.Request, error) {
		var reqs []reconcile.Request
		listIn := func(in client.ListOption) error {
			obj, err := scheme.New(listGVK)
			if err != nil {
				return err
			}
			list, ok := obj.(client.ObjectList)
			if !ok {
				return fmt.Errorf("%s is not a list", listGVK)
			}
			if err := cache.List(ctx, list, in, client.UnsafeDisableDeepCopy); err != nil {
				return err
			}
			return meta.EachListItem(list, func(o runtime.Object) error {
				if m, ok := o.(client.Object); ok && keep(sharding.Key(m.GetNamespace(), m.GetName())) {
					reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(m)})
				}
				return nil
			})
		}
		if namespaces != nil {
			namespaced, err := apiutil.IsGVKNamespaced(gvk, mapper)
			switch {
			case err != nil:
				namespaces = nil // list them all: keep still decides
			case !namespaced:
				return nil, nil // a cluster-scoped kind gained nothing
			}
		}
		for _, in := range sharding.ListScopes(namespaces) {
			// A namespace given up since holds none of what was gained.
			if err := listIn(in); err != nil && !shardcache.IsNotOwned(err) {
				return nil, err
			}
		}
		return reqs, nil
	}
}
