package integration

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// TestKubernetesProviderServiceAccount reads another namespace's Secrets as a
// ServiceAccount (TokenRequest): what its RBAC allows works, what it does not
// is refused by the API server and reported, and nothing is written.
func TestKubernetesProviderServiceAccount(t *testing.T) {
	runEso(t, testConfig())
	app := env.Namespace(t, "sa-app", nil)
	shared := env.Namespace(t, "sa-shared", nil)
	create(t,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: "reader"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: "read-db"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{"db"},
		}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: "read-db"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "read-db"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: app}}},
		plainSecret(shared, "db", map[string]string{"password": "shared-pw"}),
		plainSecret(shared, "other", map[string]string{"password": "not-for-app"}),
		&provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: "shared"}, Spec: provv1.KubernetesSpec{
			RemoteNamespace: shared,
			Auth:            &provv1.KubernetesAuth{ServiceAccount: &provv1.KubernetesServiceAccount{Name: "reader"}},
		}},
	)
	store := secretStore(app, "shared", storeSpec("Kubernetes", "shared", ""))
	create(t, store)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)

	allowed := externalSecret(app, "db", "SecretStore", "shared", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "password")})
	denied := externalSecret(app, "other", "SecretStore", "shared", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("other", "password")})
	create(t, allowed, denied)
	waitSecretData(t, app, "db", map[string]string{"password": "shared-pw"})
	msg := waitReady(t, denied, metav1.ConditionFalse, esv1.ReasonStoreNotAllowed)
	if secretExists(t, app, "other") {
		t.Errorf("a Secret the ServiceAccount may not read was synced")
	}
	if !strings.Contains(msg, "forbidden") {
		t.Errorf("the condition does not say the API server refused: %s", msg)
	}
}
