package integration

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/v1compat/migrate"
)

// runMigrateCode runs `eso migrate args...` as the cluster's administrator
// and returns its exit code and what it printed.
func runMigrateCode(args ...string) (int, string) {
	var out bytes.Buffer
	code := migrate.Run(args, &out, &out, func(string, *runtime.Scheme) (client.Client, error) { return env.Client, nil })
	return code, out.String()
}

// tenantUser is a user who may do anything with provider configurations in
// namespace, and nothing elsewhere (what the aggregated edit role gives a
// tenant over eso's kinds, and more).
func tenantUser(t *testing.T, namespace, name string) client.Client {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name + "-provider-configs"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{provv1.GroupVersion.Group, "secretstore.external-secrets.io", "external-secrets.io"},
		Resources: []string{"*"}, Verbs: []string{"*"},
	}}}
	create(t, role, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}}})
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), role) })
	c, err := client.New(env.UserConfig(t, name), client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// deleteV2ClusterStore removes a ClusterSecretStore eso migrate made.
func deleteV2ClusterStore(t *testing.T, name string) {
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &ssv2.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
}

// TestMigrateClusterStoreConfigurationStaysWithTheAdmin: a v1
// ClusterSecretStore whose credentials are in a tenant's namespace is
// migrated with its provider configuration in --cluster-config-namespace,
// never in that tenant's namespace, and still reads with the same
// credentials (credentialsNamespace). The tenant's full rights over eso's
// kinds in its own namespace do not reach the configuration every allowed
// namespace uses. Without --cluster-config-namespace the migration stops
// with what to pass. A configuration already there that holds the planned
// fields plus one more (a look-alike) is refused, naming it, and the users
// of its store stay where they were; run again, the migration takes what it
// made itself (the API server's defaults aside).
func TestMigrateClusterStoreConfigurationStaysWithTheAdmin(t *testing.T) {
	ctx := context.Background()
	runEso(t, testConfig())
	admin := env.Namespace(t, "mig-admin", nil)
	teamA := env.Namespace(t, "mig-team-a", nil)
	teamB := env.Namespace(t, "mig-team-b", nil)
	shared := env.Namespace(t, "mig-shared", nil)
	create(t,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: teamA, Name: "reader"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: admin, Name: "reader"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: "read-db"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{"db"},
		}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: "read-db"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-db"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: teamA},
				{Kind: "ServiceAccount", Name: "reader", Namespace: admin}}},
		plainSecret(shared, "db", map[string]string{"password": "shared-pw"}),
	)
	// sharedStore's credentials are team-a's ServiceAccount; adminStore's
	// are in the admin's namespace.
	sharedStore, adminStore := "mig-shared-"+teamB, "mig-admin-"+teamB
	applyYAML(t, "", fmt.Sprintf(`
apiVersion: external-secrets.io/v1
kind: ClusterSecretStore
metadata: {name: %[1]s}
spec:
  conditions: [{namespaces: [%[3]s, %[4]s]}]
  provider:
    kubernetes:
      remoteNamespace: %[5]s
      auth: {serviceAccount: {name: reader, namespace: %[3]s}}
---
apiVersion: external-secrets.io/v1
kind: ClusterSecretStore
metadata: {name: %[2]s}
spec:
  conditions: [{namespaces: [%[4]s]}]
  provider:
    kubernetes:
      remoteNamespace: %[5]s
      auth: {serviceAccount: {name: reader, namespace: %[6]s}}
`, sharedStore, adminStore, teamA, teamB, shared, admin))
	deleteV2ClusterStore(t, sharedStore)
	deleteV2ClusterStore(t, adminStore)
	viaShared := externalSecret(teamB, "via-shared", "ClusterSecretStore", sharedStore, map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "password")})
	viaAdmin := externalSecret(teamB, "via-admin", "ClusterSecretStore", adminStore, map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "password")})
	viaShared.Spec.Target.Name, viaAdmin.Spec.Target.Name = "via-shared", "via-admin"
	create(t, viaShared, viaAdmin)
	waitSecretData(t, teamB, "via-shared", map[string]string{"password": "shared-pw"})
	waitSecretData(t, teamB, "via-admin", map[string]string{"password": "shared-pw"})

	// Without the admin's namespace, nothing is planned into a tenant's.
	code, out := runMigrateCode("--namespace", teamB, "--apply")
	if code == 0 || !strings.Contains(out, "--cluster-config-namespace is required") || !strings.Contains(out, sharedStore) {
		t.Fatalf("eso migrate without --cluster-config-namespace: exit %d\n%s", code, out)
	}

	// A look-alike of adminStore's configuration: the planned fields and
	// one more.
	lookalike := &provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: admin, Name: adminStore}, Spec: provv1.KubernetesSpec{
		RemoteNamespace: shared,
		Auth:            &provv1.KubernetesAuth{ServiceAccount: &provv1.KubernetesServiceAccount{Name: "reader", Audiences: []string{"https://attacker.example"}}},
	}}
	create(t, lookalike)

	code, out = runMigrateCode("--namespace", teamB, "--cluster-config-namespace", admin, "--apply")
	if code != 0 {
		t.Fatalf("eso migrate: exit %d\n%s", code, out)
	}
	if want := "refused  ClusterSecretStore " + adminStore + " (external-secrets.io/v1): Kubernetes.provider.secretstore.external-secrets.io/v2alpha1 " +
		admin + "/" + adminStore + " exists with another spec"; !strings.Contains(out, want) {
		t.Errorf("the look-alike configuration is not refused by name; want %q in\n%s", want, out)
	}

	// The configuration is the admin's; the credentials stay team-a's.
	var cfg provv1.Kubernetes
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: admin, Name: sharedStore}, &cfg); err != nil {
		t.Fatalf("the configuration is not in the admin's namespace %s: %v\n%s", admin, err, out)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: teamA, Name: sharedStore}, &provv1.Kubernetes{}); !apierrors.IsNotFound(err) {
		t.Errorf("a configuration was written to the tenant's namespace %s: %v", teamA, err)
	}
	var css ssv2.ClusterSecretStore
	if err := env.Client.Get(ctx, client.ObjectKey{Name: sharedStore}, &css); err != nil {
		t.Fatal(err)
	}
	if css.Spec.ProviderConfig.ProviderRef.Namespace != admin || css.Spec.CredentialsNamespace != teamA {
		t.Errorf("the v2alpha1 store points at %s with credentials in %q; want %s and %s",
			css.Spec.ProviderConfig.ProviderRef.Namespace, css.Spec.CredentialsNamespace, admin, teamA)
	}
	waitReady(t, &css, metav1.ConditionTrue, ssv2.ReasonValid)
	var moved esv1.ExternalSecret
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(viaShared), &moved); err != nil || moved.Spec.SecretStoreRef.APIVersion != esv1.StoreAPIVersionV2Alpha1 {
		t.Fatalf("via-shared was not re-pointed (%v): %+v", err, moved.Spec.SecretStoreRef)
	}
	// Still read with team-a's ServiceAccount, through the moved configuration.
	waitReady(t, &moved, metav1.ConditionTrue, esv1.ReasonSecretSynced)
	fresh := externalSecret(teamB, "fresh", "ClusterSecretStore", sharedStore, map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "password")})
	fresh.Spec.SecretStoreRef.APIVersion = esv1.StoreAPIVersionV2Alpha1
	fresh.Spec.Target.Name = "fresh"
	create(t, fresh)
	waitSecretData(t, teamB, "fresh", map[string]string{"password": "shared-pw"})

	// The store of the look-alike was not migrated; its user stays.
	if err := env.Client.Get(ctx, client.ObjectKey{Name: adminStore}, &ssv2.ClusterSecretStore{}); !apierrors.IsNotFound(err) {
		t.Errorf("the store of the look-alike configuration was migrated: %v", err)
	}
	var stayed esv1.ExternalSecret
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(viaAdmin), &stayed); err != nil || stayed.Spec.SecretStoreRef.APIVersion != "" {
		t.Errorf("via-admin moved to a store whose configuration someone else made (%v): %+v", err, stayed.Spec.SecretStoreRef)
	}

	// team-a, with every right over eso's kinds in its namespace, cannot
	// touch the configuration team-b reads through.
	dev := tenantUser(t, teamA, "mig-team-a-dev-"+teamA)
	eventually(t, "the tenant's rights in its own namespace", func() error {
		return dev.Create(ctx, fakeConfig(teamA, "own", map[string]string{"k": "v"}))
	})
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"remoteNamespace":"`+teamA+`"}}`))
	if err := dev.Patch(ctx, &provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: admin, Name: sharedStore}}, patch); !apierrors.IsForbidden(err) {
		t.Errorf("the tenant edited the cluster store's configuration: %v, want Forbidden", err)
	}
	if err := dev.Create(ctx, &provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: admin, Name: "planted"}}); !apierrors.IsForbidden(err) {
		t.Errorf("the tenant created a configuration in the admin's namespace: %v, want Forbidden", err)
	}

	// Run again, as admins do: what it made is taken as its own.
	code, out = runMigrateCode("--namespace", teamB, "--cluster-config-namespace", admin)
	if code != 0 || strings.Contains(out, "refused  ClusterSecretStore "+sharedStore) || strings.Contains(out, "create   Kubernetes.provider.secretstore.external-secrets.io/v2alpha1 "+admin+"/"+sharedStore) {
		t.Errorf("a second run does not take what the first made: exit %d\n%s", code, out)
	}
}

// TestMigrateOneTenantCannotHoldBackAnother: a cluster-wide migration
// where one tenant's stores cannot work: a plugin store naming a client
// certificate of another namespace is refused in the plan (never waited
// for); a store that translates but never becomes Ready (its credentials
// Secret is missing) holds back only its own users, reported; another
// tenant's users move as soon as their store is Ready.
func TestMigrateOneTenantCannotHoldBackAnother(t *testing.T) {
	ctx := context.Background()
	runEso(t, testConfig())
	mallory := env.Namespace(t, "mig-mallory", nil)
	alice := env.Namespace(t, "mig-alice", nil)
	applyYAML(t, mallory, fmt.Sprintf(`
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: never-ready}
spec:
  provider:
    vault:
      server: http://127.0.0.1:1
      path: secret
      auth: {tokenSecretRef: {name: missing, key: token}}
---
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: cross-certificate}
spec:
  provider:
    plugin:
      address: eso-provider.eso-system.svc:8443
      auth: {clientCertificate: {name: core-tls, namespace: %[1]s}}
      providerRef: {kind: Fake, name: demo}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: blocked}
spec:
  refreshInterval: 1h
  secretStoreRef: {name: never-ready}
  data: [{secretKey: k, remoteRef: {key: k}}]
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: plugin-user}
spec:
  refreshInterval: 1h
  secretStoreRef: {name: cross-certificate}
  data: [{secretKey: k, remoteRef: {key: k}}]
`, alice))
	applyYAML(t, alice, `
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: fake}
spec:
  provider:
    fake: {data: [{key: k, value: alice-value}]}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: app}
spec:
  refreshInterval: 1h
  secretStoreRef: {name: fake}
  target: {name: app}
  data: [{secretKey: k, remoteRef: {key: k}}]
`)
	waitSecretData(t, alice, "app", map[string]string{"k": "alice-value"})

	// What a cluster-wide run reads, kept to these tenants' namespaces (the
	// test cluster is shared with other tests).
	objs, err := migrate.Read(ctx, env.Client, "")
	if err != nil {
		t.Fatal(err)
	}
	ours := func(ns string) bool { return ns == mallory || ns == alice }
	objs.SecretStores = keep(objs.SecretStores, func(i int) bool { return ours(objs.SecretStores[i].Namespace) })
	objs.ExternalSecrets = keep(objs.ExternalSecrets, func(i int) bool { return ours(objs.ExternalSecrets[i].Namespace) })
	objs.PushSecrets = keep(objs.PushSecrets, func(i int) bool { return ours(objs.PushSecrets[i].Namespace) })
	objs.ClusterSecretStores, objs.ClusterExternalSecret, objs.ClusterPushSecrets = nil, nil, nil

	p := migrate.Build(objs, migrate.Options{Defaults: migrate.ServerDefaults(ctx, env.Client)})
	refused := strings.Join(p.Refused, "\n")
	if !strings.Contains(refused, "SecretStore "+mallory+"/cross-certificate (external-secrets.io/v1): spec.provider.plugin.auth.clientCertificate") {
		t.Errorf("the plugin store that cannot work is not refused in the plan: %s", refused)
	}
	for _, sp := range p.Stores {
		if sp.Store.GetName() == "cross-certificate" {
			t.Errorf("the plan waits for the plugin store that cannot work")
		}
	}

	var log bytes.Buffer
	start := time.Now()
	err = migrate.Apply(ctx, env.Client, p, 15*time.Second, &log)
	if err == nil || !strings.Contains(err.Error(), mallory+"/never-ready is not Ready") || !strings.Contains(err.Error(), "ExternalSecret.external-secrets.io/v1 "+mallory+"/blocked") {
		t.Errorf("Apply does not report the store that never became Ready and its user: %v\n%s", err, log.String())
	}
	var app esv1.ExternalSecret
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: alice, Name: "app"}, &app); err != nil {
		t.Fatal(err)
	}
	if app.Spec.SecretStoreRef.APIVersion != esv1.StoreAPIVersionV2Alpha1 {
		t.Fatalf("another tenant's broken store kept alice's ExternalSecret from moving (%s):\n%s", time.Since(start), log.String())
	}
	waitReady(t, &app, metav1.ConditionTrue, esv1.ReasonSecretSynced)
	for _, name := range []string{"blocked", "plugin-user"} {
		var es esv1.ExternalSecret
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: mallory, Name: name}, &es); err != nil {
			t.Fatal(err)
		}
		if es.Spec.SecretStoreRef.APIVersion != "" {
			t.Errorf("%s moved to a store that is not Ready: %+v", name, es.Spec.SecretStoreRef)
		}
	}
}

// keep is the items of s for which ok(index) holds.
func keep[T any](s []T, ok func(int) bool) []T {
	var out []T
	for i := range s {
		if ok(i) {
			out = append(out, s[i])
		}
	}
	return out
}
