package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/grpcclient/grpcclienttest"
	"github.com/eso-dev/eso/providers/plugin/wire"
)

// TestRemoteProviderSync: a SecretStore whose providerConfig.address points
// at a provider process (a gRPC server on loopback, mTLS with a client
// certificate Secret) syncs like an in-process one. While the provider
// process is down the Secret stays exactly as it was and the ExternalSecret
// says the provider is unavailable; once it is back, eso recovers by itself.
// A rotated client certificate is used without any change to the store.
// A provider process of another protocol major makes its store
// IncompatibleProvider.
func TestRemoteProviderSync(t *testing.T) {
	ctx := context.Background()
	serverCA, clientCA := grpcclienttest.NewCA(t, "provider-ca"), grpcclienttest.NewCA(t, "core-ca")
	srv := grpcclienttest.NewServer(grpcclienttest.ServerCredentials(t, serverCA, clientCA))
	srv.Start(t)
	srv.Set("db", []byte(`{"user":"app","password":"s3cr3t-value"}`))
	future := grpcclienttest.NewServer(grpcclienttest.ServerCredentials(t, serverCA, clientCA))
	future.Majors = []uint32{wire.ProtocolMajor + 1}
	future.Start(t)

	runEso(t, testConfig())
	ns := env.Namespace(t, "remote", nil)
	remoteStore := func(name, address string) *ssv2.SecretStore {
		s := secretStore(ns, name, storeSpec("Fake", "demo", ""))
		s.Spec.ProviderConfig.Address = address
		s.Spec.ProviderConfig.Auth = &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: "core-tls"}}
		return s
	}
	store, incompatible := remoteStore("remote", srv.Addr()), remoteStore("incompatible", future.Addr())
	create(t, grpcclienttest.ClientSecret(t, ns, "core-tls", "eso-core", clientCA, serverCA), store, incompatible)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
	if msg := waitReady(t, incompatible, metav1.ConditionFalse, ssv2.ReasonIncompatibleProvider); !strings.Contains(msg, "protocol majors") {
		t.Errorf("IncompatibleProvider message: %s", msg)
	}

	es := externalSecret(ns, "app", "SecretStore", "remote", map[string]esv1.ExternalSecretDataRemoteRef{"pw": ref("db", "password")})
	es.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{{Extract: &esv1.ExternalSecretDataRemoteRef{Key: "db"}}}
	create(t, es)
	synced := waitSecretData(t, ns, "app", map[string]string{"pw": "s3cr3t-value", "user": "app", "password": "s3cr3t-value"})

	srv.Stop()
	annotate(t, es, "force-sync", "outage")
	msg := waitReady(t, es, metav1.ConditionFalse, esv1.ReasonSecretSyncedError)
	if !strings.Contains(msg, wire.ErrUnavailable.Error()) || strings.Contains(msg, "s3cr3t-value") {
		t.Fatalf("condition during the outage: %s", msg)
	}
	unchanged := func() {
		t.Helper()
		var now corev1.Secret
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(synced), &now); err != nil {
			t.Fatal(err)
		}
		if now.ResourceVersion != synced.ResourceVersion || string(now.Data["password"]) != "s3cr3t-value" {
			t.Fatalf("the Secret changed: resourceVersion %s -> %s", synced.ResourceVersion, now.ResourceVersion)
		}
	}
	unchanged()

	srv.Start(t)
	waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)
	unchanged()
	if clients := srv.Clients(); len(clients) == 0 || clients[len(clients)-1] != "eso-core" {
		t.Errorf("the provider process saw client certificates %v", clients)
	}

	// The client certificate rotates: the next syncs come with the new one,
	// on a new connection, without touching the store.
	var tlsSecret corev1.Secret
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "core-tls"}, &tlsSecret); err != nil {
		t.Fatal(err)
	}
	tlsSecret.Data = grpcclienttest.ClientSecret(t, ns, "core-tls", "eso-core-rotated", clientCA, serverCA).Data
	if err := env.Client.Update(ctx, &tlsSecret); err != nil {
		t.Fatal(err)
	}
	attempt := 0
	eventually(t, "a sync with the rotated client certificate", func() error {
		attempt++
		annotate(t, es, "force-sync", fmt.Sprint("rotation-", attempt))
		time.Sleep(200 * time.Millisecond)
		if clients := srv.Clients(); clients[len(clients)-1] != "eso-core-rotated" {
			return fmt.Errorf("last call came with %s", clients[len(clients)-1])
		}
		return nil
	})
	unchanged()
}
