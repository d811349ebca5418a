package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"go.uber.org/fx"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/tests/testeso"
)

// probe asks eso's health server at addr for path (/healthz, /readyz or one
// of their checks): nil when it answers 200.
func probe(addr, path string) error {
	client := http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get("http://" + addr + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", path, resp.Status)
	}
	return nil
}

// heldSource is an event source that stays unsynced until release is
// closed, as a controller whose watch cannot sync yet.
type heldSource struct{ release chan struct{} }

func (s heldSource) Start(context.Context, workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	return nil
}

func (s heldSource) WaitForSync(ctx context.Context) error {
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestNotReadyUntilEveryControllerStarted runs eso with one more controller
// whose source cannot sync yet: with every informer cache synced, /readyz
// stays false while that controller has not started, and turns true once it
// has (which also needs every one of eso's own controllers started).
func TestNotReadyUntilEveryControllerStarted(t *testing.T) {
	src := heldSource{release: make(chan struct{})}
	released := false
	defer func() {
		if !released {
			close(src.release)
		}
	}()
	cfg := testConfig()
	cfg.HealthAddr = freeAddr(t)
	runEso(t, cfg, fx.Invoke(func(mgr ctrl.Manager) error {
		return ctrl.NewControllerManagedBy(mgr).Named("held").
			WithOptions(manager.ControllerOptions(mgr, nil, controller.Options{})).
			WatchesRawSource(src).
			Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				return reconcile.Result{}, nil
			}))
	}))

	eventually(t, "informer caches synced", func() error { return probe(cfg.HealthAddr, "/readyz/informers") })
	consistently(t, 2*time.Second, "/readyz not ready", func() error {
		if probe(cfg.HealthAddr, "/readyz") == nil {
			return errors.New("/readyz is ready while a controller has not started")
		}
		if probe(cfg.HealthAddr, "/readyz/controllers") == nil {
			return errors.New("/readyz/controllers is ready while a controller has not started")
		}
		return probe(cfg.HealthAddr, "/healthz")
	})
	close(src.release)
	released = true
	eventually(t, "/readyz ready once every controller started", func() error { return probe(cfg.HealthAddr, "/readyz") })
}

// TestStandbyReplicaIsReady runs eso with leader election while another
// replica holds the lease: the standby runs no controller (an ExternalSecret
// stays unsynced) yet is ready, or a rolling update of two replicas would
// never finish; once the lease is free it leads and syncs.
func TestStandbyReplicaIsReady(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t, "standby", nil)
	cfg := testConfig()
	cfg.HealthAddr = freeAddr(t)
	cfg.LeaderElect, cfg.LeaderElectionNS, cfg.LeaderElectionID = true, ns, "eso-standby-test"
	cfg.LeaderElectionRetry = 500 * time.Millisecond
	now := metav1.NowMicro()
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cfg.LeaderElectionID},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("another-replica"), LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: &now, RenewTime: &now}}
	create(t, lease,
		fakeConfig(ns, "values", map[string]string{"k": "v"}), secretStore(ns, "fake", storeSpec("Fake", "values", "")),
		externalSecret(ns, "app", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")}))
	// As an admin: the chart grants leases in its own namespace only.
	testeso.Run(t, env.Config, cfg)

	eventually(t, "/readyz ready on the standby", func() error { return probe(cfg.HealthAddr, "/readyz") })
	consistently(t, 2*time.Second, "the standby runs no controller", func() error {
		var s corev1.Secret
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app"}, &s)
		if apierrors.IsNotFound(err) {
			return probe(cfg.HealthAddr, "/readyz")
		}
		return fmt.Errorf("the standby synced the ExternalSecret (get: %v)", err)
	})

	if err := env.Client.Delete(ctx, lease); err != nil {
		t.Fatal(err)
	}
	waitSecretData(t, ns, "app", map[string]string{"k": "v"})
	eventually(t, "/readyz ready on the leader", func() error { return probe(cfg.HealthAddr, "/readyz") })
}
