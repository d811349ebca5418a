package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	vault "github.com/hashicorp/vault/api"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/metrics"
	"github.com/eso-dev/eso/providers/aws/awstest"
	"github.com/eso-dev/eso/providers/gcp/gcptest"
	"github.com/eso-dev/eso/providers/gcp/secretmanager"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/plugin/pluginmetrics"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
	"github.com/eso-dev/eso/tests/faultprovider"
)

// pushBound is how soon a change of a PushSecret's source reaches the
// provider: a watch, not the refresh (an hour in these tests).
const pushBound = 5 * time.Second

// vaultPushStore creates a Vault configuration and a SecretStore named name
// over the KV v2 mount "secret" of root, with the root token.
func vaultPushStore(t *testing.T, ns, name string, root *vault.Client) *ssv2.SecretStore {
	t.Helper()
	objs := vaultPushStoreObjects(ns, name, root)
	create(t, objs...)
	store := objs[len(objs)-1].(*ssv2.SecretStore)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
	return store
}

// vaultPushStoreObjects are what vaultPushStore creates, the store last.
func vaultPushStoreObjects(ns, name string, root *vault.Client) []client.Object {
	return []client.Object{plainSecret(ns, name+"-token", map[string]string{"token": vaulttest.RootToken}),
		&provv1.Vault{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: provv1.VaultSpec{
			Server: root.Address(), Path: "secret", Version: "v2",
			Auth: provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: name + "-token", Key: "token"}}}},
		secretStore(ns, name, storeSpec("Vault", name, ""))}
}

func pushSecret(ns, name, source string, stores []string, data ...esv1alpha1.PushSecretData) *esv1alpha1.PushSecret {
	ps := &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: esv1alpha1.PushSecretSpec{
		RefreshInterval: &metav1.Duration{Duration: time.Hour},
		Selector:        esv1alpha1.PushSecretSelector{Secret: &esv1alpha1.PushSecretSecret{Name: source}},
		Data:            data,
	}}
	for _, s := range stores {
		ps.Spec.SecretStoreRefs = append(ps.Spec.SecretStoreRefs, esv1alpha1.PushSecretStoreRef{Name: s, Kind: "SecretStore"})
	}
	return ps
}

func pushed(secretKey, remoteKey, property string) esv1alpha1.PushSecretData {
	return esv1alpha1.PushSecretData{Match: esv1alpha1.PushSecretMatch{SecretKey: secretKey,
		RemoteRef: esv1alpha1.PushSecretRemoteRef{RemoteKey: remoteKey, Property: property}}}
}

// kv reads a KV v2 secret's data and current version; nil when absent.
func kv(t *testing.T, root *vault.Client, key string) (map[string]any, int) {
	t.Helper()
	s, err := root.Logical().Read("secret/data/" + key)
	if err != nil {
		t.Fatal(err)
	}
	if s == nil || s.Data["data"] == nil {
		return nil, 0
	}
	version, _ := s.Data["metadata"].(map[string]any)["version"].(json.Number).Int64()
	return s.Data["data"].(map[string]any), int(version)
}

func waitKV(t *testing.T, root *vault.Client, key string, want map[string]string) int {
	t.Helper()
	var version int
	eventuallyWithin(t, pushBound+waitTimeout, fmt.Sprintf("Vault secret %s to be %v", key, want), func() error {
		var data map[string]any
		data, version = kv(t, root, key)
		if len(data) != len(want) {
			return fmt.Errorf("holds %d fields", len(data))
		}
		for k, v := range want {
			if data[k] != v {
				return fmt.Errorf("field %s differs", k)
			}
		}
		return nil
	})
	return version
}

func waitKVGone(t *testing.T, root *vault.Client, key string) {
	t.Helper()
	eventually(t, "Vault secret "+key+" to be deleted", func() error {
		if data, _ := kv(t, root, key); data != nil {
			return fmt.Errorf("still there")
		}
		return nil
	})
}

// TestPushSecretToVault: a Secret is pushed when the PushSecret is created
// and within pushBound of each change of the Secret; refreshes that find
// Vault as it should be write nothing (no new version); drift is repaired;
// deletionPolicy Delete removes exactly what an entry that left the spec
// pushed, and everything when the PushSecret goes.
func TestPushSecretToVault(t *testing.T) {
	root := vaulttest.Start(t)
	runEso(t, testConfig())
	ns := env.Namespace(t, "push-vault", nil)
	vaultPushStore(t, ns, "vault", root)
	source := plainSecret(ns, "app", map[string]string{"user": "admin", "password": "s3cr3t"})
	create(t, source)
	ps := pushSecret(ns, "app", "app", []string{"vault"},
		pushed("password", "push/app", "password"), pushed("user", "push/app", "user"), pushed("", "push/whole", ""))
	ps.Spec.DeletionPolicy = esv1alpha1.DeletionPolicyDelete
	create(t, ps)
	waitReady(t, ps, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
	waitKV(t, root, "push/app", map[string]string{"password": "s3cr3t", "user": "admin"})
	version := waitKV(t, root, "push/whole", map[string]string{"password": "s3cr3t", "user": "admin"})

	t.Run("a change of the source is pushed at once", func(t *testing.T) {
		source.Data = map[string][]byte{"user": []byte("admin"), "password": []byte("rotated")}
		if err := env.Client.Update(context.Background(), source); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		waitKV(t, root, "push/app", map[string]string{"password": "rotated", "user": "admin"})
		version = waitKV(t, root, "push/whole", map[string]string{"password": "rotated", "user": "admin"})
		if took := time.Since(start); took > pushBound {
			t.Errorf("pushed %v after the change, want within %v", took.Round(time.Millisecond), pushBound)
		}
	})

	t.Run("refreshes write nothing and repair drift", func(t *testing.T) {
		patchPushSecret(t, ps, func(ps *esv1alpha1.PushSecret) { ps.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second} })
		time.Sleep(1500 * time.Millisecond) // the edit itself is synced and recorded
		calls := testutil.ToFloat64(pluginmetrics.ProviderCalls.WithLabelValues("Vault", "PushSecret", "success"))
		statuses := testutil.ToFloat64(metrics.StatusWrites.WithLabelValues("PushSecret"))
		time.Sleep(3 * time.Second)
		if _, now := kv(t, root, "push/whole"); now != version {
			t.Fatalf("refreshes with nothing changed made Vault version %d, was %d", now, version)
		}
		if refreshed := testutil.ToFloat64(pluginmetrics.ProviderCalls.WithLabelValues("Vault", "PushSecret", "success")) - calls; refreshed < 3 {
			t.Fatalf("%v pushes in 3 s at a 1 s refresh: the refreshes did not run", refreshed)
		}
		if wrote := testutil.ToFloat64(metrics.StatusWrites.WithLabelValues("PushSecret")) - statuses; wrote != 0 {
			t.Fatalf("refreshes with nothing changed wrote the status %v times", wrote)
		}
		if _, err := root.Logical().Write("secret/data/push/whole", map[string]any{"data": map[string]any{"password": "tampered"}}); err != nil {
			t.Fatal(err)
		}
		waitKV(t, root, "push/whole", map[string]string{"password": "rotated", "user": "admin"})
	})

	t.Run("an entry leaving the spec is deleted, and only it", func(t *testing.T) {
		patchPushSecret(t, ps, func(ps *esv1alpha1.PushSecret) { ps.Spec.Data = ps.Spec.Data[:1] }) // user and whole leave
		waitKVGone(t, root, "push/whole")
		waitKV(t, root, "push/app", map[string]string{"password": "rotated"}) // only the property went
	})

	t.Run("deleting the PushSecret deletes what it pushed", func(t *testing.T) {
		if err := env.Client.Delete(context.Background(), ps); err != nil {
			t.Fatal(err)
		}
		waitKVGone(t, root, "push/app")
		eventually(t, "the PushSecret to go", func() error {
			err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(ps), &esv1alpha1.PushSecret{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (%v)", err)
		})
	})
}

// TestPushSecretSafety: eso never overwrites a remote secret it did not
// create, IfNotExists never overwrites, deletionPolicy None never deletes,
// one failing store does not stop another, a Secret an ExternalSecret read
// from a store is never pushed back to it, and dropping a store that shares
// its backend with the one replacing it deletes nothing.
func TestPushSecretSafety(t *testing.T) {
	root := vaulttest.Start(t)
	runEso(t, testConfig())
	ns := env.Namespace(t, "push-safety", nil)
	vaultPushStore(t, ns, "vault", root)
	create(t, plainSecret(ns, "src", map[string]string{"password": "mine"}))

	t.Run("a secret eso did not create is not overwritten", func(t *testing.T) {
		if _, err := root.Logical().Write("secret/data/theirs", map[string]any{"data": map[string]any{"password": "theirs"}}); err != nil {
			t.Fatal(err)
		}
		ps := pushSecret(ns, "theirs", "src", []string{"vault"}, pushed("password", "theirs", "password"))
		create(t, ps)
		if msg := waitReady(t, ps, metav1.ConditionFalse, esv1alpha1.ReasonNotOwned); !strings.Contains(msg, "theirs") || strings.Contains(msg, "mine") {
			t.Errorf("condition %q should name the remote secret and no value", msg)
		}
		waitKV(t, root, "theirs", map[string]string{"password": "theirs"})
	})

	t.Run("adoptionPolicy Adopt takes a secret over, and it is eso's from then on", func(t *testing.T) {
		if _, err := root.Logical().Write("secret/data/adopted", map[string]any{"data": map[string]any{"password": "theirs", "keep": "me"}}); err != nil {
			t.Fatal(err)
		}
		ps := pushSecret(ns, "adopt", "src", []string{"vault"}, pushed("password", "adopted", "password"))
		ps.Spec.AdoptionPolicy = esv1alpha1.AdoptionPolicyAdopt
		ps.Spec.DeletionPolicy = esv1alpha1.DeletionPolicyDelete
		create(t, ps)
		waitReady(t, ps, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
		waitKV(t, root, "adopted", map[string]string{"password": "mine", "keep": "me"})
		meta, err := root.Logical().Read("secret/metadata/adopted")
		if err != nil {
			t.Fatal(err)
		}
		if custom, _ := meta.Data["custom_metadata"].(map[string]any); custom[plugin.ManagedByKey] != plugin.ManagedByValue {
			t.Fatalf("custom metadata %v lacks eso's mark", meta.Data["custom_metadata"])
		}
		if err := env.Client.Delete(context.Background(), ps); err != nil {
			t.Fatal(err)
		}
		waitKV(t, root, "adopted", map[string]string{"keep": "me"}) // only its property went
	})

	t.Run("IfNotExists never overwrites", func(t *testing.T) {
		ps := pushSecret(ns, "once", "src", []string{"vault"}, pushed("password", "once", "password"))
		ps.Spec.UpdatePolicy = esv1alpha1.UpdatePolicyIfNotExists
		create(t, ps)
		waitReady(t, ps, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
		version := waitKV(t, root, "once", map[string]string{"password": "mine"})
		src := &corev1.Secret{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "src"}, src); err != nil {
			t.Fatal(err)
		}
		src.Data["password"] = []byte("changed")
		if err := env.Client.Update(context.Background(), src); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if data, now := kv(t, root, "once"); now != version || data["password"] != "mine" {
			t.Fatalf("IfNotExists overwrote: version %d → %d", version, now)
		}
	})

	t.Run("None never deletes", func(t *testing.T) {
		ps := pushSecret(ns, "keep", "src", []string{"vault"}, pushed("password", "kept", ""))
		create(t, ps)
		waitReady(t, ps, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
		if err := env.Client.Delete(context.Background(), ps); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if data, _ := kv(t, root, "kept"); data == nil {
			t.Fatal("deletionPolicy None deleted the remote secret")
		}
	})

	t.Run("one failing store does not stop another", func(t *testing.T) {
		create(t, secretStore(ns, "broken", storeSpec("Vault", "missing-config", "")))
		ps := pushSecret(ns, "two", "src", []string{"broken", "vault"}, pushed("password", "two", "password"))
		create(t, ps)
		msg := waitReady(t, ps, metav1.ConditionFalse, esv1alpha1.ReasonErrored)
		if !strings.Contains(msg, "SecretStore/broken") {
			t.Errorf("condition %q does not name the failing store", msg)
		}
		waitKV(t, root, "two", map[string]string{"password": "changed"})
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(ps), ps); err != nil {
			t.Fatal(err)
		}
		if _, ok := ps.Status.SyncedPushSecrets["SecretStore/vault"]["two/password"]; !ok {
			t.Errorf("syncedPushSecrets %v lacks what the working store holds", ps.Status.SyncedPushSecrets)
		}
	})

	t.Run("a Secret is never pushed back to the store it was read from", func(t *testing.T) {
		if _, err := root.Logical().Write("secret/data/upstream", map[string]any{"data": map[string]any{"k": "v"}}); err != nil {
			t.Fatal(err)
		}
		create(t, externalSecret(ns, "copied", "SecretStore", "vault", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("upstream", "k")}))
		waitSecretData(t, ns, "copied", map[string]string{"k": "v"})
		ps := pushSecret(ns, "loop", "copied", []string{"vault"}, pushed("k", "upstream", "k"))
		create(t, ps)
		if msg := waitReady(t, ps, metav1.ConditionFalse, esv1alpha1.ReasonLoopRefused); !strings.Contains(msg, "copied") {
			t.Errorf("condition %q does not name the ExternalSecret", msg)
		}
	})

	t.Run("switching to a store over the same backend deletes nothing", func(t *testing.T) {
		create(t, secretStore(ns, "vault-twin", storeSpec("Vault", "vault", "")))
		ps := pushSecret(ns, "switch", "src", []string{"vault"}, pushed("password", "switched", ""))
		ps.Spec.DeletionPolicy = esv1alpha1.DeletionPolicyDelete
		create(t, ps)
		waitReady(t, ps, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
		patchPushSecret(t, ps, func(ps *esv1alpha1.PushSecret) {
			ps.Spec.SecretStoreRefs = []esv1alpha1.PushSecretStoreRef{{Name: "vault-twin", Kind: "SecretStore"}}
		})
		eventually(t, "the PushSecret to sync through the twin", func() error {
			if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(ps), ps); err != nil {
				return err
			}
			if _, ok := ps.Status.SyncedPushSecrets["SecretStore/vault-twin"]; !ok || len(ps.Status.SyncedPushSecrets) != 1 {
				return fmt.Errorf("synced %v", ps.Status.SyncedPushSecrets)
			}
			return nil
		})
		if data, _ := kv(t, root, "switched"); data == nil {
			t.Fatal("the secret both stores write was deleted through the dropped one")
		}
	})
}

func patchPushSecret(t *testing.T, ps *esv1alpha1.PushSecret, edit func(*esv1alpha1.PushSecret)) {
	t.Helper()
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(ps), ps); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(ps.DeepCopy())
	edit(ps)
	if err := env.Client.Patch(context.Background(), ps, patch); err != nil {
		t.Fatal(err)
	}
}

// TestPushSecretToEveryProvider pushes to every provider kind that writes,
// and reads back through the same store with an ExternalSecret (so the
// round trip, not a provider's own API, is what is checked): a key into a
// property and the whole Secret into another remote secret; a change of the
// source reaches the provider; an entry leaving the spec (deletionPolicy
// Delete) is deleted; deleting the PushSecret deletes the rest. Moto serves
// AWS, a Vault dev server Vault, the in-test gRPC server GCP, the envtest API
// server Kubernetes; Fake keeps pushes in memory. The cases share one eso
// and run in parallel.
func TestPushSecretToEveryProvider(t *testing.T) {
	moto := awstest.StartMoto(t)
	root := vaulttest.Start(t)
	gcp, _ := gcptest.Start(t)
	tokens := gcp.StartTokenEndpoint(t)
	process := faultprovider.Start(t, providerProcess(t))
	runEso(t, testConfig(), withProviders(map[string]func(plugin.Deps) plugin.Provider{secretmanager.Kind: gcpProvider(nil)}))
	awsSpec := func(ns string) provv1.AWSSpec {
		return provv1.AWSSpec{Region: "eu-central-1", Endpoint: moto, Auth: &provv1.AWSAuth{SecretRef: &provv1.AWSAuthSecretRef{
			AccessKeyID:     provv1.SecretKeySelector{Name: "aws-creds", Key: "id"},
			SecretAccessKey: provv1.SecretKeySelector{Name: "aws-creds", Key: "secret"},
		}}}
	}
	cases := map[string]func(ns string) []client.Object{
		"Fake": func(ns string) []client.Object { return []client.Object{fakeConfig(ns, "backend", nil)} },
		// The same pushes through a provider process (eso --mode=provider's
		// server), over mTLS.
		"Fake through a provider process": func(ns string) []client.Object {
			return []client.Object{fakeConfig(ns, "backend", nil), process.ClientSecret(t, ns, "core-tls", "eso-core")}
		},
		"Kubernetes": func(ns string) []client.Object {
			return []client.Object{&provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backend"}}}
		},
		"Vault": func(ns string) []client.Object {
			return []client.Object{plainSecret(ns, "vault-token", map[string]string{"token": vaulttest.RootToken}),
				&provv1.Vault{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backend"}, Spec: provv1.VaultSpec{
					Server: root.Address(), Path: "secret", Version: "v2",
					Auth: provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault-token", Key: "token"}}}}}
		},
		"AWSSecretManager": func(ns string) []client.Object {
			return []client.Object{plainSecret(ns, "aws-creds", map[string]string{"id": "AKIDEXAMPLE", "secret": "example"}),
				&provv1.AWSSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backend"}, Spec: awsSpec(ns)}}
		},
		"AWSParameterStore": func(ns string) []client.Object {
			return []client.Object{plainSecret(ns, "aws-creds", map[string]string{"id": "AKIDEXAMPLE", "secret": "example"}),
				&provv1.AWSParameterStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backend"}, Spec: awsSpec(ns)}}
		},
		"GCPSecretManager": func(ns string) []client.Object {
			return []client.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gcp-key"},
				Data: map[string][]byte{"key.json": tokens.Key(t, "eso@p.iam.gserviceaccount.com")}},
				gcpKeyConfig(ns, "backend", gcp.Addr, "gcp-key")}
		},
	}
	for name, backend := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			kind, remote := strings.CutSuffix(name, " through a provider process")
			ns := env.Namespace(t, "push-"+strings.ToLower(kind), nil)
			store := secretStore(ns, "store", storeSpec(kind, "backend", ""))
			if remote {
				store.Spec.ProviderConfig.Address = process.Addr()
				store.Spec.ProviderConfig.Auth = &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: "core-tls"}}
			}
			create(t, backend(ns)...)
			create(t, store)
			waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
			source := plainSecret(ns, "src", map[string]string{"user": "admin", "password": "first"})
			create(t, source)
			// Remote names every provider accepts, distinct per case (moto
			// and Vault are shared).
			one, whole := "push-one-"+ns, "push-whole-"+ns
			ps := pushSecret(ns, "push", "src", []string{"store"}, pushed("password", one, "password"), pushed("", whole, ""))
			ps.Spec.DeletionPolicy = esv1alpha1.DeletionPolicyDelete
			create(t, ps)
			waitReady(t, ps, metav1.ConditionTrue, esv1alpha1.ReasonSynced)

			readOne := ref(one, "password")
			if kind == "Fake" {
				readOne = ref(one, "") // as upstream's Fake, a property push stores the value as is
			}
			readBack := externalSecret(ns, "read-one", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{"password": readOne})
			readWhole := externalSecret(ns, "read-whole", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{
				"user": ref(whole, "user"), "password": ref(whole, "password")})
			for _, es := range []*esv1.ExternalSecret{readBack, readWhole} {
				es.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second}
			}
			create(t, readBack, readWhole)
			waitSecretData(t, ns, "read-one", map[string]string{"password": "first"})
			waitSecretData(t, ns, "read-whole", map[string]string{"user": "admin", "password": "first"})

			source.Data = map[string][]byte{"user": []byte("admin"), "password": []byte("second")}
			if err := env.Client.Update(context.Background(), source); err != nil {
				t.Fatal(err)
			}
			waitSecretData(t, ns, "read-one", map[string]string{"password": "second"})
			waitSecretData(t, ns, "read-whole", map[string]string{"user": "admin", "password": "second"})

			patchPushSecret(t, ps, func(ps *esv1alpha1.PushSecret) { ps.Spec.Data = ps.Spec.Data[1:] })
			waitNotReady(t, readBack)
			waitSecretData(t, ns, "read-whole", map[string]string{"user": "admin", "password": "second"})

			if err := env.Client.Delete(context.Background(), ps); err != nil {
				t.Fatal(err)
			}
			waitNotReady(t, readWhole)
		})
	}
}

// TestClusterPushSecret: a ClusterPushSecret puts its PushSecret in every
// namespace its selectors match, and each pushes there; a namespace losing
// the label loses its PushSecret; a PushSecret of the same name it did not
// create is left alone and reported; an edit of a created one is reverted.
func TestClusterPushSecret(t *testing.T) {
	runEso(t, testConfig())
	ctx := context.Background()
	platform := env.Namespace(t, "cps-platform", nil)
	tag := map[string]string{"cps-test": platform}
	a := env.Namespace(t, "cps-a", tag)
	b := env.Namespace(t, "cps-b", tag)
	taken := env.Namespace(t, "cps-taken", tag)
	css := clusterStore("cps-"+platform, ssv2.ClusterSecretStoreSpec{SecretStoreSpec: storeSpec("Fake", "shared", platform)})
	create(t, fakeConfig(platform, "shared", nil), css)
	t.Cleanup(func() { _ = env.Client.Delete(ctx, css) })
	for _, ns := range []string{a, b, taken} {
		create(t, plainSecret(ns, "team-source", map[string]string{"token": "t0ken"}))
	}
	create(t, pushSecret(taken, "team-push", "team-source", []string{"somebody-elses"}, pushed("token", "other", "")))

	spec := pushSecret("", "", "team-source", nil, pushed("token", "team/token-"+platform, "")).Spec
	spec.SecretStoreRefs = []esv1alpha1.PushSecretStoreRef{{Name: css.Name, Kind: "ClusterSecretStore"}}
	cps := &esv1alpha1.ClusterPushSecret{ObjectMeta: metav1.ObjectMeta{Name: "cps-" + platform}, Spec: esv1alpha1.ClusterPushSecretSpec{
		PushSecretName:     "team-push",
		PushSecretMetadata: esv1alpha1.PushSecretMetadata{Labels: map[string]string{"team": "platform"}},
		NamespaceSelectors: []*metav1.LabelSelector{{MatchLabels: tag}},
		PushSecretSpec:     spec,
	}}
	create(t, cps)
	t.Cleanup(func() { _ = env.Client.Delete(ctx, cps) })

	waitProvisioned := func(want ...string) {
		t.Helper()
		slices.Sort(want)
		eventually(t, fmt.Sprintf("provisioned namespaces %v", want), func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cps), cps); err != nil {
				return err
			}
			if !slices.Equal(cps.Status.ProvisionedNamespaces, want) {
				return fmt.Errorf("provisioned %v, failed %v", cps.Status.ProvisionedNamespaces, cps.Status.FailedNamespaces)
			}
			return nil
		})
	}
	waitProvisioned(a, b)
	if len(cps.Status.FailedNamespaces) != 1 || cps.Status.FailedNamespaces[0].Namespace != taken {
		t.Errorf("failed namespaces = %+v, want %s (its PushSecret is not ours)", cps.Status.FailedNamespaces, taken)
	}
	waitReady(t, cps, metav1.ConditionFalse, esv1.ReasonNamespacesFailed)
	for _, ns := range []string{a, b} {
		ps := &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-push"}}
		waitReady(t, ps, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
		if ps.Labels["team"] != "platform" {
			t.Errorf("pushSecretMetadata labels not applied: %v", ps.Labels)
		}
	}

	// An edit is reverted; a namespace losing the label loses its PushSecret.
	edited := &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: b, Name: "team-push"}}
	patchPushSecret(t, edited, func(ps *esv1alpha1.PushSecret) { ps.Spec.UpdatePolicy = esv1alpha1.UpdatePolicyIfNotExists })
	eventually(t, "the edit to be reverted", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(edited), edited); err != nil {
			return err
		}
		if edited.Spec.UpdatePolicy != esv1alpha1.UpdatePolicyReplace {
			return fmt.Errorf("still %s", edited.Spec.UpdatePolicy)
		}
		return nil
	})
	relabel(t, a, map[string]string{})
	waitProvisioned(b)
	eventually(t, "the PushSecret of the unlabelled namespace to go", func() error {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: a, Name: "team-push"}, &esv1alpha1.PushSecret{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
}

// TestPushSecretGeneratedValue: selector.generatorRef pushes a value
// generated once and kept (in the PushSecret's own Secret), not a new one
// at each refresh; deleting the kept Secret rotates it.
func TestPushSecretGeneratedValue(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "push-generated", nil)
	store := secretStore(ns, "store", storeSpec("Fake", "fake", ""))
	create(t, fakeConfig(ns, "fake", nil), store, passwordConfig(ns, "pw", 24))
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
	ps := &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, Spec: esv1alpha1.PushSecretSpec{
		RefreshInterval: &metav1.Duration{Duration: time.Second},
		SecretStoreRefs: []esv1alpha1.PushSecretStoreRef{{Name: "store", Kind: "SecretStore"}},
		Selector: esv1alpha1.PushSecretSelector{GeneratorRef: &esv1.GeneratorRef{
			APIVersion: "generators.external-secrets.io/v1alpha1", Kind: "Password", Name: "pw"}},
		Data: []esv1alpha1.PushSecretData{pushed("password", "db-password", "")},
	}}
	create(t, ps)
	waitReady(t, ps, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
	read := externalSecret(ns, "read", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db-password", "")})
	read.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second}
	create(t, read)
	first := waitGenerated(t, ns, "read", "password", "")
	if len(first.Data["password"]) != 24 {
		t.Fatalf("pushed a %d-byte password, want 24", len(first.Data["password"]))
	}
	kept := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db-generated"}, kept); err != nil {
		t.Fatalf("the generated value is not kept: %v", err)
	}
	time.Sleep(3 * time.Second) // three refreshes: none may push a new value
	requireUnchanged(t, first)
	if err := env.Client.Delete(context.Background(), kept); err != nil {
		t.Fatal(err)
	}
	waitGenerated(t, ns, "read", "password", string(first.Data["password"]))
}

// TestPushSecretEdges: what IfNotExists finds existing is not recorded, so
// deletionPolicy Delete neither deletes it nor holds the PushSecret
// forever; a PushSecret that feeds its own source (a template over a Secret
// it writes) turns at most once a second; a change of its template's
// ConfigMap is pushed at once.
func TestPushSecretEdges(t *testing.T) {
	runEso(t, testConfig())
	ctx := context.Background()

	t.Run("IfNotExists over a secret eso did not push", func(t *testing.T) {
		ns := env.Namespace(t, "push-ifnotexists", nil)
		create(t, fakeConfig(ns, "fake", map[string]string{"theirs": "x"}), secretStore(ns, "store", storeSpec("Fake", "fake", "")),
			plainSecret(ns, "src", map[string]string{"password": "mine"}))
		ps := pushSecret(ns, "once", "src", []string{"store"}, pushed("password", "theirs", ""))
		ps.Spec.UpdatePolicy = esv1alpha1.UpdatePolicyIfNotExists
		ps.Spec.DeletionPolicy = esv1alpha1.DeletionPolicyDelete
		create(t, ps)
		waitReady(t, ps, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
		if len(ps.Status.SyncedPushSecrets) != 0 {
			t.Errorf("recorded %v: a secret it did not push", ps.Status.SyncedPushSecrets)
		}
		if err := env.Client.Delete(ctx, ps); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the PushSecret to go", func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ps), ps); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there: %+v", ps.Status.Conditions)
			}
			return nil
		})
	})

	t.Run("a PushSecret feeding its own source is paced", func(t *testing.T) {
		ns := env.Namespace(t, "push-feedback", nil)
		create(t, &provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "k8s"}}, secretStore(ns, "store", storeSpec("Kubernetes", "k8s", "")))
		self := plainSecret(ns, "self", map[string]string{"k": "a"})
		self.Labels = map[string]string{plugin.ManagedByKey: plugin.ManagedByValue} // as if eso had created it
		create(t, self)
		ps := pushSecret(ns, "toggle", "self", []string{"store"}, pushed("k", "self", "k"))
		ps.Spec.Template = &esv1.ExternalSecretTemplate{Data: map[string]string{"k": `{{ if eq .k "a" }}b{{ else }}a{{ end }}`}}
		create(t, ps)
		time.Sleep(2 * time.Second)
		flips := countFlips(t, ns, "self", 5*time.Second)
		if flips > 8 {
			t.Errorf("the Secret flipped %d times in 5 s: the loop is not paced (at most one push a second)", flips)
		}
		t.Logf("%d flips in 5 s", flips)
	})

	t.Run("a change of the template's ConfigMap is pushed at once", func(t *testing.T) {
		ns := env.Namespace(t, "push-template", nil)
		store := secretStore(ns, "store", storeSpec("Fake", "fake", ""))
		create(t, fakeConfig(ns, "fake", nil), store, plainSecret(ns, "src", map[string]string{"user": "app"}),
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tpl"}, Data: map[string]string{"greeting": "hello {{ .user }}"}})
		ps := pushSecret(ns, "templated", "src", []string{"store"}, pushed("greeting", "greeting", ""))
		ps.Spec.Template = &esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{
			{ConfigMap: &esv1.TemplateRef{Name: "tpl", Items: []esv1.TemplateRefItem{{Key: "greeting"}}}}}}
		create(t, ps)
		read := externalSecret(ns, "read", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{"greeting": ref("greeting", "")})
		read.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second}
		create(t, read)
		waitSecretData(t, ns, "read", map[string]string{"greeting": "hello app"})
		var cm corev1.ConfigMap
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tpl"}, &cm); err != nil {
			t.Fatal(err)
		}
		cm.Data["greeting"] = "bye {{ .user }}"
		if err := env.Client.Update(ctx, &cm); err != nil {
			t.Fatal(err)
		}
		waitSecretData(t, ns, "read", map[string]string{"greeting": "bye app"})
	})
}

// countFlips samples Secret ns/name's data for d and counts how often it
// changed.
func countFlips(t *testing.T, ns, name string, d time.Duration) int {
	t.Helper()
	flips, last := 0, ""
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var s corev1.Secret
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
			t.Fatal(err)
		}
		if v := string(s.Data["k"]); v != last {
			if last != "" {
				flips++
			}
			last = v
		}
	}
	return flips
}

// TestPushSecretMetadata: an entry's metadata (upstream's
// PushSecretMetadata) is applied where the provider supports it (moto for
// AWS Secrets Manager and Parameter Store; the in-test server for GCP; the
// Kubernetes provider) and refused, not ignored, where it does not.
func TestPushSecretMetadata(t *testing.T) {
	ctx := context.Background()
	moto := awstest.StartMoto(t)
	gcp, _ := gcptest.Start(t)
	tokens := gcp.StartTokenEndpoint(t)
	runEso(t, testConfig(), withProviders(map[string]func(plugin.Deps) plugin.Provider{secretmanager.Kind: gcpProvider(nil)}))
	ns := env.Namespace(t, "push-metadata", nil)
	awsSpec := provv1.AWSSpec{Region: "eu-central-1", Endpoint: moto, Auth: &provv1.AWSAuth{SecretRef: &provv1.AWSAuthSecretRef{
		AccessKeyID:     provv1.SecretKeySelector{Name: "aws-creds", Key: "id"},
		SecretAccessKey: provv1.SecretKeySelector{Name: "aws-creds", Key: "secret"},
	}}}
	create(t, plainSecret(ns, "aws-creds", map[string]string{"id": "AKIDEXAMPLE", "secret": "example"}),
		&provv1.AWSSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sm"}, Spec: awsSpec},
		&provv1.AWSParameterStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ps"}, Spec: awsSpec},
		&provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "k8s"}},
		fakeConfig(ns, "fake", nil),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gcp-key"},
			Data: map[string][]byte{"key.json": tokens.Key(t, "eso@p.iam.gserviceaccount.com")}},
		gcpKeyConfig(ns, "gcp", gcp.Addr, "gcp-key"),
		plainSecret(ns, "src", map[string]string{"password": "s3cr3t"}))
	for _, s := range []*ssv2.SecretStore{secretStore(ns, "sm", storeSpec("AWSSecretManager", "sm", "")),
		secretStore(ns, "gcp", storeSpec("GCPSecretManager", "gcp", "")),
		secretStore(ns, "ps", storeSpec("AWSParameterStore", "ps", "")), secretStore(ns, "k8s", storeSpec("Kubernetes", "k8s", "")),
		secretStore(ns, "fake", storeSpec("Fake", "fake", ""))} {
		create(t, s)
		waitReady(t, s, metav1.ConditionTrue, ssv2.ReasonValid)
	}
	withMetadata := func(name, store, remote, spec string) *esv1alpha1.PushSecret {
		entry := pushed("password", remote, "")
		if store == "k8s" {
			entry = pushed("password", remote, "password") // a key of the Secret
		}
		entry.Metadata = &apiextensionsv1.JSON{Raw: []byte(`{"apiVersion":"kubernetes.external-secrets.io/v1alpha1","kind":"PushSecretMetadata","spec":` + spec + `}`)}
		return pushSecret(ns, name, "src", []string{store}, entry)
	}
	sm := withMetadata("sm", "sm", "meta-"+ns, `{"tags":{"team":"payments"},"description":"pushed by eso","secretPushFormat":"string"}`)
	ps := withMetadata("ps", "ps", "meta-"+ns, `{"secretType":"String","description":"api key","tags":{"env":"staging"}}`)
	k8s := withMetadata("k8s", "k8s", "pushed", `{"labels":{"team":"payments"},"annotations":{"note":"from eso"}}`)
	gsm := withMetadata("gcp", "gcp", "meta-gcp", `{"labels":{"team":"payments"},"annotations":{"note":"from eso"}}`)
	fake := withMetadata("fake", "fake", "pushed", `{"tags":{"team":"payments"}}`)
	create(t, sm, ps, k8s, gsm, fake)
	for _, p := range []*esv1alpha1.PushSecret{sm, ps, k8s, gsm} {
		waitReady(t, p, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
	}
	if msg := waitReady(t, fake, metav1.ConditionFalse, esv1alpha1.ReasonErrored); !strings.Contains(msg, "applies no push metadata") {
		t.Errorf("Fake with metadata: %q, want a refusal that says so", msg)
	}

	cfg := aws.Config{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("seed", "seed", "")}
	smc := awssm.NewFromConfig(cfg, func(o *awssm.Options) { o.BaseEndpoint = aws.String(moto) })
	desc, err := smc.DescribeSecret(ctx, &awssm.DescribeSecretInput{SecretId: aws.String("meta-" + ns)})
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]string{}
	for _, tag := range desc.Tags {
		tags[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
	}
	if tags["team"] != "payments" || tags[plugin.ManagedByKey] != plugin.ManagedByValue || aws.ToString(desc.Description) != "pushed by eso" {
		t.Errorf("Secrets Manager secret: tags %v, description %q", tags, aws.ToString(desc.Description))
	}
	value, err := smc.GetSecretValue(ctx, &awssm.GetSecretValueInput{SecretId: aws.String("meta-" + ns)})
	if err != nil || aws.ToString(value.SecretString) != "s3cr3t" {
		t.Errorf("secretPushFormat string: SecretString %q, %v", aws.ToString(value.SecretString), err)
	}
	ssmc := ssm.NewFromConfig(cfg, func(o *ssm.Options) { o.BaseEndpoint = aws.String(moto) })
	param, err := ssmc.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("meta-" + ns)})
	if err != nil || param.Parameter.Type != ssmtypes.ParameterTypeString {
		t.Errorf("Parameter Store secretType String: %+v, %v", param, err)
	}
	ptags, err := ssmc.ListTagsForResource(ctx, &ssm.ListTagsForResourceInput{ResourceType: ssmtypes.ResourceTypeForTaggingParameter, ResourceId: aws.String("meta-" + ns)})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tag := range ptags.TagList {
		found = found || (aws.ToString(tag.Key) == "env" && aws.ToString(tag.Value) == "staging")
	}
	if !found {
		t.Errorf("Parameter Store tags %v lack env=staging", ptags.TagList)
	}
	if g, ok := gcp.Secret("projects/p/secrets/meta-gcp"); !ok || g.Labels["team"] != "payments" || g.Annotations["note"] != "from eso" ||
		g.Labels[plugin.ManagedByKey] != plugin.ManagedByValue {
		t.Errorf("GCP secret: %+v (found %v)", g, ok)
	}
	var secret corev1.Secret
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pushed"}, &secret); err != nil {
		t.Fatal(err)
	}
	if secret.Labels["team"] != "payments" || secret.Annotations["note"] != "from eso" || secret.Labels[plugin.ManagedByKey] != plugin.ManagedByValue {
		t.Errorf("Kubernetes Secret labels %v, annotations %v", secret.Labels, secret.Annotations)
	}
}
