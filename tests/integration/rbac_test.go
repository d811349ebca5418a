package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/tests/testenv"
	"github.com/eso-dev/eso/tests/testeso"
)

func coreRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "charts", "eso", "files", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(raw, &role); err != nil {
		t.Fatal(err)
	}
	return &role
}

// TestCoreRoleIsLeastPrivilege: the ClusterRole eso is installed with
// (upstream's CVE-2024-45041 was an operator role reading every Secret and
// patching webhook configurations) has no wildcard, no way to grant,
// escalate or impersonate, nothing on webhooks, CRDs or RBAC, no
// deletecollection, and writes only eso's own kinds, Secrets, events,
// leases and reviews.
func TestCoreRoleIsLeastPrivilege(t *testing.T) {
	role := coreRole(t)
	writable := map[string]bool{"externalsecrets": true, "externalsecrets/status": true, "clusterexternalsecrets/status": true,
		"secretstores/status": true, "clustersecretstores/status": true, "generators/status": true, "clustergenerators/status": true,
		"generatorstates": true, "generatorstates/status": true, "secrets": true, "events": true, "leases": true,
		"pushsecrets": true, "pushsecrets/status": true, "clusterpushsecrets/status": true,
		"externalsecrets/finalizers": true, "pushsecrets/finalizers": true, "clusterexternalsecrets/finalizers": true, "clusterpushsecrets/finalizers": true,
		"serviceaccounts/token": true, "tokenreviews": true, "subjectaccessreviews": true}
	// Workloads are patched (their Pod template's restartedAt) for rollout
	// restarts, a rule the chart grants only when they are enabled
	// (TestRolloutRestartsOnlyWhenEnabled); never created, updated or deleted.
	restartable := map[string]bool{"deployments": true, "statefulsets": true, "daemonsets": true}
	for _, rule := range role.Rules {
		for _, list := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs, rule.ResourceNames} {
			if slices.Contains(list, "*") {
				t.Errorf("wildcard in rule %+v", rule)
			}
		}
		if len(rule.NonResourceURLs) > 0 {
			t.Errorf("non-resource URLs in rule %+v", rule)
		}
		for _, g := range rule.APIGroups {
			if strings.Contains(g, "admissionregistration") || strings.Contains(g, "apiextensions") || strings.Contains(g, "rbac") {
				t.Errorf("rule on %s: %+v", g, rule)
			}
		}
		for _, v := range rule.Verbs {
			switch v {
			case "escalate", "bind", "impersonate", "deletecollection":
				t.Errorf("verb %s in rule %+v", v, rule)
			case "create", "update", "patch", "delete":
				for _, r := range rule.Resources {
					if v == "patch" && restartable[r] {
						continue
					}
					if !writable[r] {
						t.Errorf("%s on %s, which eso only reads", v, r)
					}
				}
			}
		}
	}
}

// TestEsoRunsUnderItsRole runs eso as a user bound only to the generated
// ClusterRole, as an install does, and syncs through a SecretStore (Fake), a
// Kubernetes-provider store and a ClusterSecretStore with conditions: a
// permission the role lacks fails the sync.
func TestEsoRunsUnderItsRole(t *testing.T) {
	ctx := context.Background()
	role := coreRole(t)
	role.Name = "eso-core-under-test"
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "eso-core"}}}
	create(t, role, binding)
	t.Cleanup(func() { _ = env.Client.Delete(ctx, binding); _ = env.Client.Delete(ctx, role) })

	ns := env.Namespace(t, "rbac", map[string]string{"team": "rbac"})
	platform := env.Namespace(t, "rbac-platform", nil)
	cfg := testConfig()
	testeso.Run(t, env.UserConfig(t, "eso-core"), cfg)

	cluster := &ssv2.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: ns + "-shared"},
		Spec: ssv2.ClusterSecretStoreSpec{SecretStoreSpec: storeSpec("Fake", "shared", platform),
			Conditions: []ssv2.ClusterSecretStoreCondition{{Namespaces: []string{ns}}}}}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, cluster) })
	create(t,
		fakeConfig(ns, "values", map[string]string{"k": "from-fake"}),
		secretStore(ns, "fake", storeSpec("Fake", "values", "")),
		plainSecret(ns, "source", map[string]string{"key": "from-kubernetes"}),
		&provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "same-namespace"}},
		secretStore(ns, "kube", storeSpec("Kubernetes", "same-namespace", "")),
		fakeConfig(platform, "shared", map[string]string{"k": "from-cluster-store"}),
		cluster,
		externalSecret(ns, "via-fake", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"a": ref("k", "")}),
		externalSecret(ns, "via-kube", "SecretStore", "kube", map[string]esv1.ExternalSecretDataRemoteRef{"a": ref("source", "key")}),
		externalSecret(ns, "via-cluster", "ClusterSecretStore", cluster.Name, map[string]esv1.ExternalSecretDataRemoteRef{"a": ref("k", "")}),
	)
	waitSecretData(t, ns, "via-fake", map[string]string{"a": "from-fake"})
	waitSecretData(t, ns, "via-kube", map[string]string{"a": "from-kubernetes"})
	waitSecretData(t, ns, "via-cluster", map[string]string{"a": "from-cluster-store"})
}

// TestNotReadyWhileACacheCannotSync runs eso under its role minus list and
// watch of ExternalSecrets, as an API server that refuses one resource:
// /readyz answers not ready, at once and for as long as that lasts, while
// /healthz stays up; once the permission is granted eso becomes ready and
// syncs without a restart.
func TestNotReadyWhileACacheCannotSync(t *testing.T) {
	ctx := context.Background()
	full := coreRole(t)
	role := full.DeepCopy()
	role.Name = "eso-core-refused-one-kind"
	for i, rule := range role.Rules {
		if slices.Contains(rule.Resources, "externalsecrets") {
			role.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return v == "list" || v == "watch" })
		}
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "eso-refused"}}}
	create(t, role, binding)
	t.Cleanup(func() { _ = env.Client.Delete(ctx, binding); _ = env.Client.Delete(ctx, role) })

	cfg := testConfig()
	cfg.HealthAddr = freeAddr(t)
	testeso.Run(t, env.UserConfig(t, "eso-refused"), cfg)
	probe := func(path string) error { return probe(cfg.HealthAddr, path) }
	eventually(t, "/healthz up", func() error { return probe("/healthz") })
	consistently(t, 3*time.Second, "/readyz not ready", func() error {
		start := time.Now()
		err := probe("/readyz")
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			return fmt.Errorf("/readyz took %s to answer", elapsed)
		}
		if err == nil {
			return errors.New("/readyz is ready while ExternalSecrets cannot be listed")
		}
		return nil
	})

	ns := env.Namespace(t, "refused", nil)
	create(t, fakeConfig(ns, "values", map[string]string{"k": "v"}), secretStore(ns, "fake", storeSpec("Fake", "values", "")),
		externalSecret(ns, "app", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")}))
	role.Rules = full.Rules
	if err := env.Client.Update(ctx, role); err != nil {
		t.Fatal(err)
	}
	eventually(t, "/readyz ready once ExternalSecrets can be listed", func() error { return probe("/readyz") })
	waitSecretData(t, ns, "app", map[string]string{"k": "v"})
}
