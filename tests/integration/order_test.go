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
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
)

// convergeBound is how soon after its last referent arrives a dependent
// must be Ready: a watch's requeue, not a refresh (an hour here) or a
// restart.
const convergeBound = 10 * time.Second

// TestConvergesInAnyOrder creates an ExternalSecret first, lets it fail on
// its missing referent, then creates the referent: the ExternalSecret syncs
// within convergeBound, without a restart or an annotation. The objects of
// each case are created in the order listed, the ExternalSecret first.
func TestConvergesInAnyOrder(t *testing.T) {
	runEso(t, testConfig())
	for name, tc := range map[string]struct {
		es        func(ns string) *esv1.ExternalSecret
		referents func(ns string) []client.Object
		key       string
	}{
		"a Password referenced directly": {
			es: func(ns string) *esv1.ExternalSecret {
				return generatedSecret(ns, "app", esv1.GeneratorRef{Kind: "Password", Name: "pw"})
			},
			referents: func(ns string) []client.Object { return []client.Object{passwordConfig(ns, "pw", 16)} },
			key:       "password",
		},
		"a Generator, then its Password": {
			es: func(ns string) *esv1.ExternalSecret {
				return generatedSecret(ns, "app", esv1.GeneratorRef{Kind: "Generator", Name: "gen"})
			},
			referents: func(ns string) []client.Object {
				return []client.Object{
					&genv2.Generator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gen"}, Spec: genv2.GeneratorSpec{
						ProviderConfig: genv2.ProviderConfig{ProviderRef: genv2.ProviderRef{Kind: "Password", Name: "pw"}}}},
					passwordConfig(ns, "pw", 16),
				}
			},
			key: "password",
		},
		"a SecretStore, then its Fake configuration": {
			es: func(ns string) *esv1.ExternalSecret {
				return externalSecret(ns, "app", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "")})
			},
			referents: func(ns string) []client.Object {
				return []client.Object{secretStore(ns, "store", storeSpec("Fake", "fake", "")),
					fakeConfig(ns, "fake", map[string]string{"db": "s3cr3t"})}
			},
			key: "password",
		},
	} {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t, "order", nil)
			es := tc.es(ns)
			create(t, es)
			eventually(t, "the ExternalSecret to fail on its missing referent", func() error {
				if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(es), es); err != nil {
					return err
				}
				if c := readyCondition(es); c == nil || c.Status != metav1.ConditionFalse {
					return fmt.Errorf("Ready %+v", c)
				}
				return nil
			})
			for _, obj := range tc.referents(ns) {
				time.Sleep(time.Second) // let the dependent see each referent arrive
				create(t, obj)
			}
			start := time.Now()
			waitGenerated(t, ns, "app", tc.key, "")
			if took := time.Since(start); took > convergeBound {
				t.Errorf("synced %v after its last referent arrived, want within %v", took.Round(time.Millisecond), convergeBound)
			}
		})
	}
}

func readyCondition(es *esv1.ExternalSecret) *metav1.Condition {
	for i := range es.Status.Conditions {
		if es.Status.Conditions[i].Type == esv1.ConditionReady {
			return &es.Status.Conditions[i]
		}
	}
	return nil
}

// credentialsBound is how soon a store whose credentials Secret arrives
// after it becomes Ready: eso does not cache Secrets it does not manage, so
// it checks again every outcomes.RecheckInterval (30 s) instead of watching.
const credentialsBound = 40 * time.Second

// TestCredentialsArrivingLate: a Vault store, its ExternalSecret and its
// configuration exist before the credentials Secret; the store says the
// Secret is missing, and once it is created the store turns Ready and the
// ExternalSecret syncs within credentialsBound, without a restart. The same
// for an ExternalSecret whose template ConfigMap arrives after it (eso
// does not watch ConfigMaps either).
func TestCredentialsArrivingLate(t *testing.T) {
	root := vaulttest.Start(t)
	if _, err := root.Logical().Write("secret/data/app/db", map[string]any{"data": map[string]any{"password": "pw"}}); err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t, "late-creds", nil)
	runEso(t, testConfig())
	store := secretStore(ns, "vault", storeSpec("Vault", "vault", ""))
	create(t,
		externalSecret(ns, "app", "SecretStore", "vault", map[string]esv1.ExternalSecretDataRemoteRef{"pw": ref("app/db", "password")}),
		store,
		&provv1.Vault{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault"}, Spec: provv1.VaultSpec{
			Server: root.Address(), Path: "secret", Version: "v2",
			Auth: provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault-token", Key: "token"}}}},
	)
	templated := externalSecret(ns, "templated", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"user": ref("user", "")})
	templated.Spec.Target.Template = &esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{
		{ConfigMap: &esv1.TemplateRef{Name: "tpl", Items: []esv1.TemplateRefItem{{Key: "greeting"}}}}}}
	create(t, fakeConfig(ns, "fake", map[string]string{"user": "app"}), secretStore(ns, "fake", storeSpec("Fake", "fake", "")), templated)
	if msg := waitReady(t, store, metav1.ConditionFalse, ssv2.ReasonInvalidProviderConfig); !strings.Contains(msg, "vault-token not found") {
		t.Errorf("store condition %q does not name the missing Secret", msg)
	}
	if msg := waitReady(t, templated, metav1.ConditionFalse, esv1.ReasonTemplateError); !strings.Contains(msg, "tpl not found") {
		t.Errorf("ExternalSecret condition %q does not name the missing ConfigMap", msg)
	}
	create(t, plainSecret(ns, "vault-token", map[string]string{"token": vaulttest.RootToken}),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tpl"}, Data: map[string]string{"greeting": "hello {{ .user }}"}})
	start := time.Now()
	eventually40 := func(what string, cond func() error) {
		t.Helper()
		for deadline := time.Now().Add(credentialsBound); ; time.Sleep(200 * time.Millisecond) {
			err := cond()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v: %v", what, credentialsBound, err)
			}
		}
	}
	eventually40("the store to turn Ready", func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(store), store); err != nil {
			return err
		}
		for _, c := range store.Status.Conditions {
			if c.Type == ssv2.ConditionReady && c.Status == metav1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", store.Status.Conditions)
	})
	waitSecretData(t, ns, "app", map[string]string{"pw": "pw"})
	t.Logf("synced %v after the credentials Secret arrived", time.Since(start).Round(time.Millisecond))
	eventually40("the templated ExternalSecret to sync", func() error {
		var s corev1.Secret
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "templated"}, &s); err != nil {
			return err
		}
		if string(s.Data["greeting"]) != "hello app" {
			return fmt.Errorf("data %q", s.Data)
		}
		return nil
	})
	t.Logf("the templated one %v after its ConfigMap arrived", time.Since(start).Round(time.Millisecond))
}

// TestNamespaceLabelArrivingLate: an ExternalSecret on a ClusterSecretStore
// whose conditions admit namespaces by label is refused until its
// namespace gets the label, then syncs within convergeBound, without a
// restart or an annotation.
func TestNamespaceLabelArrivingLate(t *testing.T) {
	runEso(t, testConfig())
	platform := env.Namespace(t, "platform", nil)
	tenant := env.Namespace(t, "late-label", nil)
	css := clusterStore("late-label-"+platform, ssv2.ClusterSecretStoreSpec{
		SecretStoreSpec: storeSpec("Fake", "shared", platform),
		Conditions: []ssv2.ClusterSecretStoreCondition{
			{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"eso.example/admitted": "yes"}}}},
	})
	es := externalSecret(tenant, "app", "ClusterSecretStore", css.Name, map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	create(t, fakeConfig(platform, "shared", map[string]string{"k": "v"}), css, es)
	waitReady(t, es, metav1.ConditionFalse, esv1.ReasonStoreNotAllowed)

	var ns corev1.Namespace
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: tenant}, &ns); err != nil {
		t.Fatal(err)
	}
	ns.Labels["eso.example/admitted"] = "yes"
	if err := env.Client.Update(context.Background(), &ns); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	waitSecretData(t, tenant, "app", map[string]string{"k": "v"})
	if took := time.Since(start); took > convergeBound {
		t.Errorf("synced %v after the label arrived, want within %v", took.Round(time.Millisecond), convergeBound)
	}
}
