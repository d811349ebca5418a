package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
)

// convergeBound is how soon after its last referent arrives a dependent
// must be Ready: a watch's requeue, not a refresh (an hour here), the
// recheck (outcomes.RecheckInterval, 30 s) or a restart.
const convergeBound = 10 * time.Second

// lateBy is how long the referents of the late order arrive after their
// dependents: past the first backoffs and a recheck. (That a watch, not the
// 30 s recheck, makes the bound is shown by the dependents-first order,
// whose referents arrive right after the dependent reports them missing.)
const lateBy = 30 * time.Second

// orderCase is one reference between objects: dependents name referents.
type orderCase struct {
	dependents func(ns string) []client.Object
	referents  func(ns string) []client.Object
	// failing waits until the dependents report the missing referent
	// (default: ExternalSecret "app" of ns not Ready).
	failing func(t *testing.T, ns string)
	// synced waits for the end state (default: Secret "app" of ns holds key).
	synced func(t *testing.T, ns string)
	key    string
}

// TestConvergesInAnyOrder creates every pair of related objects in three
// orders: referents first; dependents first, the referents once the
// dependents report them missing; and the referents lateBy later. In each,
// the ExternalSecret syncs within convergeBound of the last object's
// creation, without a restart or an annotation. The cases run in parallel
// on one eso (make test raises -parallel so they all run at once).
func TestConvergesInAnyOrder(t *testing.T) {
	root := vaulttest.Start(t)
	if _, err := root.Logical().Write("secret/data/app/db", map[string]any{"data": map[string]any{"password": "pw"}}); err != nil {
		t.Fatal(err)
	}
	runEso(t, testConfig())
	fakeStore := func(ns string) []client.Object {
		return []client.Object{fakeConfig(ns, "fake", map[string]string{"user": "app"}), secretStore(ns, "fake", storeSpec("Fake", "fake", ""))}
	}
	templated := func(ns string, from esv1.TemplateFrom) *esv1.ExternalSecret {
		es := externalSecret(ns, "app", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"user": ref("user", "")})
		es.Spec.Target.Template = &esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{from}}
		return es
	}
	cases := map[string]orderCase{
		"ExternalSecret → SecretStore and its configuration": {
			dependents: func(ns string) []client.Object {
				return []client.Object{externalSecret(ns, "app", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"user": ref("user", "")})}
			},
			referents: fakeStore, key: "user",
		},
		"SecretStore → its Fake configuration": {
			dependents: func(ns string) []client.Object {
				return []client.Object{externalSecret(ns, "app", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"user": ref("user", "")}),
					secretStore(ns, "fake", storeSpec("Fake", "fake", ""))}
			},
			referents: func(ns string) []client.Object {
				return []client.Object{fakeConfig(ns, "fake", map[string]string{"user": "app"})}
			},
			key: "user",
		},
		"ExternalSecret → ClusterSecretStore": {
			dependents: func(ns string) []client.Object {
				return []client.Object{fakeConfig(ns, "fake", map[string]string{"user": "app"}),
					externalSecret(ns, "app", "ClusterSecretStore", "order-"+ns, map[string]esv1.ExternalSecretDataRemoteRef{"user": ref("user", "")})}
			},
			referents: func(ns string) []client.Object {
				return []client.Object{clusterStore("order-"+ns, ssv2.ClusterSecretStoreSpec{SecretStoreSpec: storeSpec("Fake", "fake", ns)})}
			},
			key: "user",
		},
		"SecretStore → its credentials Secret": {
			dependents: func(ns string) []client.Object {
				return []client.Object{
					externalSecret(ns, "app", "SecretStore", "vault", map[string]esv1.ExternalSecretDataRemoteRef{"pw": ref("app/db", "password")}),
					secretStore(ns, "vault", storeSpec("Vault", "vault", "")),
					&provv1.Vault{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault"}, Spec: provv1.VaultSpec{
						Server: root.Address(), Path: "secret", Version: "v2",
						Auth: provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault-token", Key: "token"}}}},
				}
			},
			referents: func(ns string) []client.Object {
				return []client.Object{plainSecret(ns, "vault-token", map[string]string{"token": vaulttest.RootToken})}
			},
			failing: func(t *testing.T, ns string) {
				store := &ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault"}}
				if msg := waitReady(t, store, metav1.ConditionFalse, ssv2.ReasonInvalidProviderConfig); !strings.Contains(msg, "vault-token not found") {
					t.Errorf("store condition %q does not name the missing Secret", msg)
				}
			},
			key: "pw",
		},
		"ExternalSecret → template ConfigMap": {
			dependents: func(ns string) []client.Object {
				return append(fakeStore(ns), templated(ns, esv1.TemplateFrom{
					ConfigMap: &esv1.TemplateRef{Name: "tpl", Items: []esv1.TemplateRefItem{{Key: "greeting"}}}}))
			},
			referents: func(ns string) []client.Object {
				return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tpl"},
					Data: map[string]string{"greeting": "hello {{ .user }}"}}}
			},
			failing: func(t *testing.T, ns string) {
				es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}}
				if msg := waitReady(t, es, metav1.ConditionFalse, esv1.ReasonTemplateError); !strings.Contains(msg, "tpl not found") {
					t.Errorf("ExternalSecret condition %q does not name the missing ConfigMap", msg)
				}
			},
			key: "greeting",
		},
		"ExternalSecret → template Secret": {
			dependents: func(ns string) []client.Object {
				return append(fakeStore(ns), templated(ns, esv1.TemplateFrom{
					Secret: &esv1.TemplateRef{Name: "tpl", Items: []esv1.TemplateRefItem{{Key: "greeting"}}}}))
			},
			referents: func(ns string) []client.Object {
				return []client.Object{plainSecret(ns, "tpl", map[string]string{"greeting": "hello {{ .user }}"})}
			},
			key: "greeting",
		},
		"ExternalSecret → Password": {
			dependents: func(ns string) []client.Object {
				return []client.Object{generatedSecret(ns, "app", esv1.GeneratorRef{Kind: "Password", Name: "pw"})}
			},
			referents: func(ns string) []client.Object { return []client.Object{passwordConfig(ns, "pw", 16)} },
			key:       "password",
		},
		"ExternalSecret → Generator": {
			dependents: func(ns string) []client.Object {
				return []client.Object{passwordConfig(ns, "pw", 16), generatedSecret(ns, "app", esv1.GeneratorRef{Kind: "Generator", Name: "gen"})}
			},
			referents: func(ns string) []client.Object { return []client.Object{generator(ns, "gen", "pw")} },
			key:       "password",
		},
		"Generator → Password": {
			dependents: func(ns string) []client.Object {
				return []client.Object{generatedSecret(ns, "app", esv1.GeneratorRef{Kind: "Generator", Name: "gen"}), generator(ns, "gen", "pw")}
			},
			referents: func(ns string) []client.Object { return []client.Object{passwordConfig(ns, "pw", 16)} },
			key:       "password",
		},
		"ExternalSecret → ClusterGenerator": {
			dependents: func(ns string) []client.Object {
				return []client.Object{passwordConfig(ns, "pw", 16), generatedSecret(ns, "app", esv1.GeneratorRef{Kind: "ClusterGenerator", Name: "order-" + ns})}
			},
			referents: func(ns string) []client.Object {
				return []client.Object{&genv2.ClusterGenerator{ObjectMeta: metav1.ObjectMeta{Name: "order-" + ns}, Spec: genv2.ClusterGeneratorSpec{
					GeneratorSpec: genv2.GeneratorSpec{ProviderConfig: genv2.ProviderConfig{
						ProviderRef: genv2.ProviderRef{Kind: "Password", Name: "pw", Namespace: ns}}},
					Conditions: []ssv2.ClusterSecretStoreCondition{{Namespaces: []string{ns}}}}}}
			},
			key: "password",
		},
		"ClusterExternalSecret → namespace": {
			dependents: func(ns string) []client.Object {
				css := clusterStore("order-"+ns, ssv2.ClusterSecretStoreSpec{SecretStoreSpec: storeSpec("Fake", "fake", ns)})
				return []client.Object{fakeConfig(ns, "fake", map[string]string{"user": "app"}), css,
					&esv1.ClusterExternalSecret{ObjectMeta: metav1.ObjectMeta{Name: "order-" + ns}, Spec: esv1.ClusterExternalSecretSpec{
						ExternalSecretName: "app",
						NamespaceSelectors: []*metav1.LabelSelector{{MatchLabels: map[string]string{"eso.example/order": ns}}},
						ExternalSecretSpec: externalSecret("", "", "ClusterSecretStore", css.Name,
							map[string]esv1.ExternalSecretDataRemoteRef{"user": ref("user", "")}).Spec,
					}}}
			},
			referents: func(ns string) []client.Object {
				return []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + "-late",
					Labels: map[string]string{"eso.example/order": ns}}}}
			},
			failing: func(t *testing.T, ns string) {
				waitReady(t, &esv1.ClusterExternalSecret{ObjectMeta: metav1.ObjectMeta{Name: "order-" + ns}},
					metav1.ConditionTrue, esv1.ReasonProvisioned)
			},
			synced: func(t *testing.T, ns string) {
				waitSecretData(t, ns+"-late", "app", map[string]string{"user": "app"})
			},
		},
	}
	for name, tc := range cases {
		for _, order := range []string{"referents first", "dependents first", "referents late"} {
			t.Run(name+"/"+order, func(t *testing.T) {
				t.Parallel()
				ns := env.Namespace(t, "order", nil)
				dependents, referents := tc.dependents(ns), tc.referents(ns)
				cleanUpClusterObjects(t, append(dependents, referents...))
				if order == "referents first" {
					create(t, referents...)
					create(t, dependents...)
				} else {
					create(t, dependents...)
					if tc.failing != nil {
						tc.failing(t, ns)
					} else {
						waitNotReady(t, &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}})
					}
					if order == "referents late" {
						time.Sleep(lateBy)
					}
					create(t, referents...)
				}
				start := time.Now()
				if tc.synced != nil {
					tc.synced(t, ns)
				} else {
					waitGenerated(t, ns, "app", tc.key, "")
				}
				took := time.Since(start)
				t.Logf("synced %v after the last object", took.Round(time.Millisecond))
				if took > convergeBound {
					t.Errorf("synced %v after the last object was created, want within %v", took.Round(time.Millisecond), convergeBound)
				}
			})
		}
	}
}

func generator(ns, name, password string) *genv2.Generator {
	return &genv2.Generator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: genv2.GeneratorSpec{
		ProviderConfig: genv2.ProviderConfig{ProviderRef: genv2.ProviderRef{Kind: "Password", Name: password}}}}
}

// cleanUpClusterObjects deletes the cluster-scoped objects among objs
// (cluster stores, generators, namespaces) when t ends.
func cleanUpClusterObjects(t *testing.T, objs []client.Object) {
	for _, o := range objs {
		if o.GetNamespace() == "" {
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
		}
	}
}

// waitNotReady waits until obj has a Ready condition that is not True.
func waitNotReady(t *testing.T, obj client.Object) {
	t.Helper()
	eventually(t, fmt.Sprintf("%T %s to report what it misses", obj, obj.GetName()), func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		c := meta.FindStatusCondition(conditions(obj), "Ready")
		if c == nil || c.Status == metav1.ConditionTrue {
			return fmt.Errorf("Ready %+v", c)
		}
		return nil
	})
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
