package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
)

// TestFindStaysInItsNamespace: a find through a Kubernetes-provider store
// lists the Secrets of the store's namespace only (upstream's
// CVE-2025-55196 listed every namespace), whether eso reads with its own
// identity, whose role lists Secrets everywhere, or with a ServiceAccount
// bound cluster-wide: Secrets with the same names and labels in another
// namespace are never found.
func TestFindStaysInItsNamespace(t *testing.T) {
	runEso(t, testConfig())
	tenant := env.Namespace(t, "find-tenant", nil)
	victim := env.Namespace(t, "find-victim", nil)
	labelled := func(ns, name, value string) *corev1.Secret {
		s := plainSecret(ns, name, map[string]string{"v": value})
		s.Labels = map[string]string{"team": "shared"}
		return s
	}
	create(t,
		labelled(tenant, "app-mine", "mine"),
		labelled(victim, "app-mine", "victims"),
		labelled(victim, "app-theirs", "victims"),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "lister"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: tenant + "-lister"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"},
		}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: tenant + "-lister"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: tenant + "-lister"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "lister", Namespace: tenant}}},
		&provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "own-identity"}},
		&provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "service-account"}, Spec: provv1.KubernetesSpec{
			Auth: &provv1.KubernetesAuth{ServiceAccount: &provv1.KubernetesServiceAccount{Name: "lister"}},
		}},
		secretStore(tenant, "own-identity", storeSpec("Kubernetes", "own-identity", "")),
		secretStore(tenant, "service-account", storeSpec("Kubernetes", "service-account", "")),
	)
	t.Cleanup(func() {
		ctx := context.Background()
		_ = env.Client.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: tenant + "-lister"}})
		_ = env.Client.Delete(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: tenant + "-lister"}})
	})
	for _, store := range []string{"own-identity", "service-account"} {
		for how, find := range map[string]esv1.ExternalSecretFind{
			"name":   {Name: &esv1.FindName{RegExp: "^app-"}},
			"labels": {Tags: map[string]string{"team": "shared"}},
		} {
			es := externalSecret(tenant, store+"-by-"+how, "SecretStore", store, nil)
			es.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{{Find: &find}}
			create(t, es)
			got := waitSecretData(t, tenant, es.Name, map[string]string{"app-mine": `{"v":"mine"}`})
			if len(got.Data) != 1 {
				t.Errorf("%s found %v, want only the tenant's app-mine", es.Name, keys(got.Data))
			}
		}
	}
}

// TestCAProviderStaysInItsNamespace: a Vault configuration's caProvider is
// read in the configuration's namespace only (upstream's CVE-2026-42875
// let a namespaced store name another namespace's): the field has no
// namespace, one set anyway is dropped by the API server, and a CA that
// exists only in another namespace is reported not found. Once the tenant
// has its own copy, the same store works.
func TestCAProviderStaysInItsNamespace(t *testing.T) {
	ctx := context.Background()
	root, caPEM := vaulttest.StartTLS(t)
	if _, err := root.Logical().Write("secret/data/app/db", map[string]any{"data": map[string]any{"password": "pw"}}); err != nil {
		t.Fatal(err)
	}
	runEso(t, testConfig())
	tenant := env.Namespace(t, "ca-tenant", nil)
	victim := env.Namespace(t, "ca-victim", nil)
	create(t,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "vault-ca"}, Data: map[string]string{"ca.crt": string(caPEM)}},
		plainSecret(victim, "vault-ca", map[string]string{"ca.crt": string(caPEM)}),
		plainSecret(tenant, "vault-token", map[string]string{"token": vaulttest.RootToken}),
	)
	for _, kind := range []string{"ConfigMap", "Secret"} {
		name := "via-" + strings.ToLower(kind)
		config := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": provv1.GroupVersion.String(), "kind": "Vault",
			"metadata": map[string]any{"namespace": tenant, "name": name},
			"spec": map[string]any{
				"server": root.Address(), "path": "secret", "version": "v2",
				"auth":       map[string]any{"tokenSecretRef": map[string]any{"name": "vault-token", "key": "token"}},
				"caProvider": map[string]any{"type": kind, "name": "vault-ca", "key": "ca.crt", "namespace": victim},
			},
		}}
		create(t, config) // the API server's answer replaces config
		if raw, _, _ := unstructured.NestedString(config.Object, "spec", "caProvider", "namespace"); raw != "" {
			t.Errorf("the API server kept caProvider.namespace %q", raw)
		}
		store := secretStore(tenant, name, storeSpec("Vault", name, ""))
		store.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second}
		create(t, store, externalSecret(tenant, name, "SecretStore", name, map[string]esv1.ExternalSecretDataRemoteRef{"pw": ref("app/db", "password")}))
		eventually(t, name+" refused", func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(store), store); err != nil {
				return err
			}
			for _, c := range store.Status.Conditions {
				if c.Type == ssv2.ConditionReady && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, tenant+"/vault-ca") {
					return nil
				}
			}
			return fmt.Errorf("store conditions %+v, want Ready=False naming %s/vault-ca", store.Status.Conditions, tenant)
		})
		if secretExists(t, tenant, name) {
			t.Errorf("%s: synced with a CA read from another namespace", name)
		}
	}

	// The tenant's own copies make both stores work.
	create(t,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "vault-ca"}, Data: map[string]string{"ca.crt": string(caPEM)}},
		plainSecret(tenant, "vault-ca", map[string]string{"ca.crt": string(caPEM)}),
	)
	for _, name := range []string{"via-configmap", "via-secret"} {
		waitSecretData(t, tenant, name, map[string]string{"pw": "pw"})
	}
}

// TestTemplateSourcesStayInTheirNamespace: templateFrom reads ConfigMaps and
// Secrets of the ExternalSecret's own namespace only (upstream's
// CVE-2026-22822 let a template read another namespace's Secrets): the
// references have no namespace, one set anyway is dropped by the API
// server, and a source that exists only in another namespace is not found.
func TestTemplateSourcesStayInTheirNamespace(t *testing.T) {
	ctx := context.Background()
	runEso(t, testConfig())
	tenant := env.Namespace(t, "tpl-tenant", nil)
	victim := env.Namespace(t, "tpl-victim", nil)
	create(t,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "tpl"}, Data: map[string]string{"leak": "victim-template"}},
		plainSecret(victim, "tpl", map[string]string{"leak": "victim-template"}),
		fakeConfig(tenant, "fake", map[string]string{"k": "v"}),
		secretStore(tenant, "fake", storeSpec("Fake", "fake", "")),
	)
	for _, kind := range []string{"configMap", "secret"} {
		es := externalSecret(tenant, "via-"+strings.ToLower(kind), "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(es)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion(esv1.GroupVersion.String())
		u.SetKind("ExternalSecret")
		source := map[string]any{"name": "tpl", "namespace": victim, "items": []any{map[string]any{"key": "leak"}}}
		if err := unstructured.SetNestedSlice(u.Object, []any{map[string]any{kind: source}}, "spec", "target", "template", "templateFrom"); err != nil {
			t.Fatal(err)
		}
		create(t, u)
		if raw, _, _ := unstructured.NestedSlice(u.Object, "spec", "target", "template", "templateFrom"); len(raw) != 1 || raw[0].(map[string]any)[kind].(map[string]any)["namespace"] != nil {
			t.Errorf("the API server kept templateFrom %v", raw)
		}
		msg := ""
		eventually(t, es.Name+" refused", func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
				return err
			}
			for _, c := range es.Status.Conditions {
				if c.Type == esv1.ConditionReady && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "tpl") {
					msg = c.Message
					return nil
				}
			}
			return fmt.Errorf("conditions %+v, want Ready=False naming the missing template source", es.Status.Conditions)
		})
		if strings.Contains(msg, victim) || strings.Contains(msg, "victim-template") || secretExists(t, tenant, es.Name) {
			t.Errorf("%s: the template reached another namespace: %q", es.Name, msg)
		}
	}
}
