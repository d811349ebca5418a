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
