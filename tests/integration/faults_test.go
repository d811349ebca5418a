package integration

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
	"google.golang.org/grpc/codes"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/grpcclient"
	fakeprovider "github.com/eso-dev/eso/providers/fake"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/plugin/wire"
	"github.com/eso-dev/eso/sdk/server"
	"github.com/eso-dev/eso/tests/faultprovider"
)

// What bounds the run time of the fault tests: every fault shows within one
// refresh and clears within one refresh plus, after a connection was lost,
// gRPC's reconnect backoff (from 0.5s, fixed in grpcclient).
const (
	faultRefresh = time.Second
	// faultCallTimeout is core's deadline per call; the latencies below sit
	// on either side of it.
	faultCallTimeout = time.Second
	latencyBelow     = 300 * time.Millisecond
	latencyAbove     = 2 * time.Second
	secretValue      = "s3cr3t-value"
)

// fastRemote replaces core's connections to provider processes with ones
// that give up on a call after faultCallTimeout, retry once after 50ms and
// read the client certificate Secret on every connection, so each fault
// shows and clears within a second or two.
func fastRemote() fx.Option {
	return fx.Decorate(func(defaults *grpcclient.Remote, mgr ctrl.Manager, lc fx.Lifecycle) *grpcclient.Remote {
		defaults.Close()
		remote := grpcclient.New(mgr.GetAPIReader(), grpcclient.Options{
			CallTimeout: faultCallTimeout, Attempts: 2, Backoff: 50 * time.Millisecond, CertificateTTL: -1,
		})
		lc.Append(fx.StopHook(remote.Close))
		return remote
	})
}

// providerProcess is what `eso --mode=provider` serves: the Fake provider,
// reading its configurations from the API server with its own client.
func providerProcess(t *testing.T) *server.Server {
	t.Helper()
	catalog, err := plugin.NewIndex([]plugin.Registration{fakeprovider.Registration})
	if err != nil {
		t.Fatal(err)
	}
	deps := plugin.Deps{Client: env.Client, APIReader: env.Client}
	s, err := server.New(server.Options{Plugins: plugin.NewPlugins(catalog, deps),
		ConfigReader: env.Client, Log: ctrl.Log.WithName("provider-process")})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// faultCase is one fault: while it lasts, the ExternalSecrets report
// esReason with a message holding message, and the store reports
// storeReason (empty: it keeps its last verdict, Valid, as for any
// transient failure). Once it ends, everything recovers by itself.
type faultCase struct {
	name        string
	start, stop func(t *testing.T)
	esReason    string
	message     string
	storeReason string
}

// TestRemoteProviderFaults: ExternalSecrets synced through a provider
// process keep their Secrets byte-identical through every fault of that
// process, say what is wrong while it lasts, and sync again without
// intervention once it ends.
func TestRemoteProviderFaults(t *testing.T) {
	ctx := context.Background()
	fp := faultprovider.Start(t, providerProcess(t))
	runEso(t, testConfig(), fastRemote())

	ns := env.Namespace(t, "faults", nil)
	store := secretStore(ns, "faulty", storeSpec("Fake", "demo", ""))
	store.Spec.RefreshInterval = &metav1.Duration{Duration: faultRefresh}
	store.Spec.ProviderConfig.Address = fp.Addr()
	store.Spec.ProviderConfig.Auth = &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: "core-tls"}}
	create(t, fakeConfig(ns, "demo", map[string]string{"db": `{"user":"app","password":"` + secretValue + `"}`, "api": "t0ken"}),
		fp.ClientSecret(t, ns, "core-tls", "eso-core"), store)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)

	byKey := externalSecret(ns, "by-key", "SecretStore", "faulty", map[string]esv1.ExternalSecretDataRemoteRef{"pw": ref("db", "password"), "api": ref("api", "")})
	extracted := externalSecret(ns, "extracted", "SecretStore", "faulty", nil)
	extracted.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{{Extract: &esv1.ExternalSecretDataRemoteRef{Key: "db"}}}
	externalSecrets := []*esv1.ExternalSecret{byKey, extracted}
	for _, es := range externalSecrets {
		es.Spec.RefreshInterval = &metav1.Duration{Duration: faultRefresh}
		create(t, es)
	}
	synced := []*corev1.Secret{
		waitSecretData(t, ns, "by-key", map[string]string{"pw": secretValue, "api": "t0ken"}),
		waitSecretData(t, ns, "extracted", map[string]string{"user": "app", "password": secretValue}),
	}
	unchanged := func(t *testing.T) {
		t.Helper()
		for _, want := range synced {
			var now corev1.Secret
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(want), &now); err != nil {
				t.Fatal(err)
			}
			if now.ResourceVersion != want.ResourceVersion || !maps.EqualFunc(now.Data, want.Data, func(a, b []byte) bool { return string(a) == string(b) }) {
				t.Fatalf("Secret %s changed: resourceVersion %s -> %s", want.Name, want.ResourceVersion, now.ResourceVersion)
			}
		}
	}
	allSynced := func(t *testing.T) {
		t.Helper()
		waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
		for _, es := range externalSecrets {
			waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)
		}
		unchanged(t)
	}

	inject := func(f faultprovider.Fault) func(*testing.T) { return func(*testing.T) { fp.Inject(f) } }
	clear := func(*testing.T) { fp.Clear() }
	present := func(c faultprovider.Certificate) func(*testing.T) {
		return func(t *testing.T) {
			fp.Present(t, c)
			fp.DropConnections(t) // live connections keep the certificate they were made with
		}
	}
	// Core checks the protocol major when it connects, so the skew shows on
	// the next connection it makes: a rotated client certificate is one.
	rotated := 0
	rotateClientCertificate := func(t *testing.T) {
		rotated++
		var secret corev1.Secret
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "core-tls"}, &secret); err != nil {
			t.Fatal(err)
		}
		secret.Data = fp.ClientSecret(t, ns, "core-tls", fmt.Sprint("eso-core-", rotated)).Data
		if err := env.Client.Update(ctx, &secret); err != nil {
			t.Fatal(err)
		}
	}
	unavailable := wire.ErrUnavailable.Error()
	cases := []faultCase{
		{name: "latency above the call deadline", start: inject(faultprovider.Fault{Latency: latencyAbove}), stop: clear,
			esReason: esv1.ReasonSecretSyncedError, message: unavailable + " (DeadlineExceeded)"},
		{name: "Unavailable", start: inject(faultprovider.Fault{Code: codes.Unavailable}), stop: clear,
			esReason: esv1.ReasonSecretSyncedError, message: unavailable + " (Unavailable)"},
		{name: "ResourceExhausted", start: inject(faultprovider.Fault{Code: codes.ResourceExhausted}), stop: clear,
			esReason: esv1.ReasonSecretSyncedError, message: unavailable + " (ResourceExhausted)"},
		{name: "Internal", start: inject(faultprovider.Fault{Code: codes.Internal}), stop: clear,
			esReason: esv1.ReasonSecretSyncedError, message: "Internal"},
		// A refusal is not transient: the store says so and gates its
		// ExternalSecrets until a revalidation passes.
		{name: "PermissionDenied", start: inject(faultprovider.Fault{Code: codes.PermissionDenied}), stop: clear,
			esReason: esv1.ReasonStoreNotReady, message: ssv2.ReasonCrossNamespaceRefused, storeReason: ssv2.ReasonCrossNamespaceRefused},
		{name: "Unauthenticated", start: inject(faultprovider.Fault{Code: codes.Unauthenticated}), stop: clear,
			esReason: esv1.ReasonStoreNotReady, message: ssv2.ReasonAuthenticationFailed, storeReason: ssv2.ReasonAuthenticationFailed},
		{name: "connections dropped", start: func(*testing.T) { fp.Disconnect() }, stop: func(t *testing.T) { fp.Reconnect(t) },
			esReason: esv1.ReasonSecretSyncedError, message: unavailable + " (Unavailable)"},
		{name: "another protocol major", start: func(t *testing.T) {
			fp.Inject(faultprovider.Fault{ProtocolMajor: wire.ProtocolMajor + 1})
			rotateClientCertificate(t)
		}, stop: clear, esReason: esv1.ReasonStoreNotReady, message: ssv2.ReasonIncompatibleProvider, storeReason: ssv2.ReasonIncompatibleProvider},
		{name: "expired server certificate", start: present(faultprovider.Expired), stop: present(faultprovider.Good),
			esReason: esv1.ReasonSecretSyncedError, message: "certificate has expired"},
		{name: "server certificate from another CA", start: present(faultprovider.WrongCA), stop: present(faultprovider.Good),
			esReason: esv1.ReasonSecretSyncedError, message: "certificate signed by unknown authority"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.start(t)
			if c.storeReason != "" {
				waitReady(t, store, metav1.ConditionFalse, c.storeReason)
			}
			for _, es := range externalSecrets {
				msg := waitReady(t, es, metav1.ConditionFalse, c.esReason)
				if !strings.Contains(msg, c.message) || strings.Contains(msg, secretValue) {
					t.Errorf("%s: condition message %q, want one naming %q and no value", es.Name, msg, c.message)
				}
			}
			if c.storeReason == "" {
				if ready := waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid); strings.Contains(ready, secretValue) {
					t.Errorf("store condition holds a value: %s", ready)
				}
			}
			unchanged(t)
			c.stop(t)
			allSynced(t)
		})
	}

	t.Run("latency below the call deadline", func(t *testing.T) {
		fp.Inject(faultprovider.Fault{Latency: latencyBelow})
		defer fp.Clear()
		forceSyncedUnder(t, "latency", externalSecrets...)
		unchanged(t)
	})
	t.Run("server certificate rotated without restart", func(t *testing.T) {
		want := fp.Present(t, faultprovider.Good)
		fp.DropConnections(t)
		eventually(t, "the rotated certificate to be presented", func() error {
			if got := fp.PresentedCertificate(t); got.SerialNumber.Cmp(want.SerialNumber) != 0 {
				return fmt.Errorf("presents serial %s", got.SerialNumber)
			}
			return nil
		})
		forceSyncedUnder(t, "rotated-certificate", externalSecrets...)
		unchanged(t)
	})
}

// forceSyncedUnder makes each ExternalSecret sync now and waits until that
// sync succeeded: status.syncedResourceVersion covers the annotations, so
// it moves only once a sync with the new one went through.
func forceSyncedUnder(t *testing.T, what string, externalSecrets ...*esv1.ExternalSecret) {
	t.Helper()
	for _, es := range externalSecrets {
		before := es.Status.SyncedResourceVersion
		annotate(t, es, "force-sync", what)
		eventually(t, "a sync of "+es.Name+" under "+what, func() error {
			if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(es), es); err != nil {
				return err
			}
			ready := readyOf(es)
			if es.Status.SyncedResourceVersion == before || ready == nil || ready.Reason != esv1.ReasonSecretSynced {
				return fmt.Errorf("syncedResourceVersion %s, Ready %v", es.Status.SyncedResourceVersion, ready)
			}
			return nil
		})
	}
}

func readyOf(es *esv1.ExternalSecret) *metav1.Condition {
	for i := range es.Status.Conditions {
		if es.Status.Conditions[i].Type == esv1.ConditionReady {
			return &es.Status.Conditions[i]
		}
	}
	return nil
}
