package integration

import (
	"context"
	"testing"
	"time"

	vault "github.com/hashicorp/vault/api"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
)

// TestVaultKubernetesAuth runs eso against a real Vault dev server whose
// Kubernetes auth method reviews ServiceAccount tokens with the real
// kube-apiserver of the test: eso requests a token for the ServiceAccount
// named in the Vault configuration, logs in, and syncs what its policy allows.
func TestVaultKubernetesAuth(t *testing.T) {
	root := vaulttest.Start(t)
	ns := env.Namespace(t, "vault", nil)
	reviewer := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault-reviewer"}}
	create(t,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault-reader"}},
		// Vault reviews login tokens (audience "vault") with a reviewer token of its own.
		reviewer,
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "vault-reviewer-" + ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:auth-delegator"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "vault-reviewer", Namespace: ns}}},
	)
	tr := &authv1.TokenRequest{}
	if err := env.Client.SubResource("token").Create(context.Background(), reviewer, tr); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(root.Sys().EnableAuthWithOptions("kubernetes", &vault.EnableAuthOptions{Type: "kubernetes"}))
	_, err := root.Logical().Write("auth/kubernetes/config", map[string]any{
		"kubernetes_host": env.Config.Host, "kubernetes_ca_cert": string(env.Config.CAData), "disable_local_ca_jwt": true,
		"token_reviewer_jwt": tr.Status.Token,
	})
	must(err)
	must(root.Sys().PutPolicy("app-read", `path "secret/data/app/*" { capabilities = ["read"] }`))
	_, err = root.Logical().Write("auth/kubernetes/role/eso", map[string]any{
		"bound_service_account_names": "vault-reader", "bound_service_account_namespaces": ns,
		"token_policies": "app-read", "token_ttl": "1h", "audience": "vault",
	})
	must(err)
	_, err = root.Logical().Write("secret/data/app/db", map[string]any{"data": map[string]any{"user": "app", "password": "pw"}})
	must(err)

	runEso(t, testConfig())
	store := secretStore(ns, "vault", storeSpec("Vault", "vault", ""))
	create(t, &provv1.Vault{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault"}, Spec: provv1.VaultSpec{
		Server: root.Address(), Path: "secret", Version: "v2",
		Auth: provv1.VaultAuth{Kubernetes: &provv1.VaultKubernetesAuth{Role: "eso",
			ServiceAccountRef: provv1.KubernetesServiceAccount{Name: "vault-reader"}}},
	}}, store)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
	es := externalSecret(ns, "app", "SecretStore", "vault", map[string]esv1.ExternalSecretDataRemoteRef{"pw": ref("app/db", "password")})
	es.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{{Extract: &esv1.ExternalSecretDataRemoteRef{Key: "app/db"}}}
	create(t, es)
	waitSecretData(t, ns, "app", map[string]string{"pw": "pw", "user": "app", "password": "pw"})

	// Outside the policy: refused, nothing written.
	denied := externalSecret(ns, "denied", "SecretStore", "vault", map[string]esv1.ExternalSecretDataRemoteRef{"x": ref("admin/root", "")})
	create(t, denied)
	waitReady(t, denied, metav1.ConditionFalse, esv1.ReasonStoreNotAllowed)
	if secretExists(t, ns, "denied") {
		t.Error("a Secret was written for a path outside the policy")
	}
}

// TestVaultTokenRotation: when the token in the credentials Secret is
// replaced and the old one revoked, eso logs in with the new one instead of
// failing forever with the client it had cached.
func TestVaultTokenRotation(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	if _, err := root.Logical().Write("secret/data/app/db", map[string]any{"data": map[string]any{"password": "pw"}}); err != nil {
		t.Fatal(err)
	}
	newToken := func() string {
		t.Helper()
		s, err := root.Auth().Token().Create(&vault.TokenCreateRequest{Policies: []string{"root"}})
		if err != nil {
			t.Fatal(err)
		}
		return s.Auth.ClientToken
	}
	first := newToken()
	ns := env.Namespace(t, "vault-rotation", nil)
	cfg := testConfig()
	cfg.Namespace = ns
	runEso(t, cfg)
	creds := plainSecret(ns, "vault-token", map[string]string{"token": first})
	create(t, creds,
		&provv1.Vault{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault"}, Spec: provv1.VaultSpec{
			Server: root.Address(), Path: "secret", Version: "v2",
			Auth: provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault-token", Key: "token"}}}},
		secretStore(ns, "vault", storeSpec("Vault", "vault", "")),
	)
	es := externalSecret(ns, "app", "SecretStore", "vault", map[string]esv1.ExternalSecretDataRemoteRef{"pw": ref("app/db", "password")})
	es.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second}
	create(t, es)
	waitSecretData(t, ns, "app", map[string]string{"pw": "pw"})

	// Rotate: a new token in the Secret, the old one revoked, a new value.
	creds.Data["token"] = []byte(newToken())
	if err := env.Client.Update(ctx, creds); err != nil {
		t.Fatal(err)
	}
	if err := root.Auth().Token().RevokeTree(first); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Logical().Write("secret/data/app/db", map[string]any{"data": map[string]any{"password": "rotated"}}); err != nil {
		t.Fatal(err)
	}
	waitSecretData(t, ns, "app", map[string]string{"pw": "rotated"})
}
