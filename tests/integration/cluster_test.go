package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// TestClusterStoreConditions: a ClusterSecretStore serves the namespaces its
// conditions allow (by name, regex or label) and refuses the others.
func TestClusterStoreConditions(t *testing.T) {
	runEso(t, testConfig())
	platform := env.Namespace(t, "platform", nil)
	byName := env.Namespace(t, "by-name", nil)
	byLabel := env.Namespace(t, "by-label", map[string]string{"eso.example/tier": "gold"})
	byRegex := env.Namespace(t, "team-regex", nil)
	refused := env.Namespace(t, "refused", nil)

	css := clusterStore("conditions-"+platform, ssv2.ClusterSecretStoreSpec{
		SecretStoreSpec: storeSpec("Fake", "shared", platform),
		Conditions: []ssv2.ClusterSecretStoreCondition{
			{Namespaces: []string{byName}},
			{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"eso.example/tier": "gold"}}},
			{NamespaceRegexes: []string{"team-re.*"}},
		},
	})
	create(t, fakeConfig(platform, "shared", map[string]string{"k": "shared-value"}), css)
	waitReady(t, css, metav1.ConditionTrue, ssv2.ReasonValid)

	for _, ns := range []string{byName, byLabel, byRegex, refused} {
		create(t, externalSecret(ns, "app", "ClusterSecretStore", css.Name, map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")}))
	}
	for _, ns := range []string{byName, byLabel, byRegex} {
		waitSecretData(t, ns, "app", map[string]string{"k": "shared-value"})
	}
	es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: refused, Name: "app"}}
	waitReady(t, es, metav1.ConditionFalse, esv1.ReasonStoreNotAllowed)
	if secretExists(t, refused, "app") {
		t.Errorf("a namespace the conditions refuse got the Secret")
	}
}

// TestClusterStoreAuthenticationScope uses the Kubernetes provider, whose
// credentials namespace is also where it reads from by default:
//   - ProviderNamespace: every namespace reads the provider namespace's Secret;
//   - ManifestNamespace: each namespace reads its own Secret, as itself.
func TestClusterStoreAuthenticationScope(t *testing.T) {
	runEso(t, testConfig())
	platform := env.Namespace(t, "platform", nil)
	teamA := env.Namespace(t, "team-a", nil)
	teamB := env.Namespace(t, "team-b", nil)
	create(t,
		&provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: "local"}},
		plainSecret(platform, "db", map[string]string{"password": "platform-pw"}),
		plainSecret(teamA, "db", map[string]string{"password": "team-a-pw"}),
		plainSecret(teamB, "db", map[string]string{"password": "team-b-pw"}),
	)
	providerScope := clusterStore("provider-scope-"+platform, ssv2.ClusterSecretStoreSpec{
		SecretStoreSpec:     storeSpec("Kubernetes", "local", platform),
		AuthenticationScope: ssv2.ProviderNamespace,
	})
	manifestScope := clusterStore("manifest-scope-"+platform, ssv2.ClusterSecretStoreSpec{
		SecretStoreSpec:     storeSpec("Kubernetes", "local", platform),
		AuthenticationScope: ssv2.ManifestNamespace,
	})
	create(t, providerScope, manifestScope)
	waitReady(t, providerScope, metav1.ConditionTrue, ssv2.ReasonValid)
	waitReady(t, manifestScope, metav1.ConditionTrue, ssv2.ReasonValid)

	for _, ns := range []string{teamA, teamB} {
		create(t,
			externalSecret(ns, "from-provider", "ClusterSecretStore", providerScope.Name,
				map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "password")}),
			externalSecret(ns, "from-manifest", "ClusterSecretStore", manifestScope.Name,
				map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "password")}),
		)
	}
	for ns, own := range map[string]string{teamA: "team-a-pw", teamB: "team-b-pw"} {
		waitSecretData(t, ns, "from-provider", map[string]string{"password": "platform-pw"})
		waitSecretData(t, ns, "from-manifest", map[string]string{"password": own})
	}

	// Whoever can edit the configuration in the platform namespace cannot
	// turn eso's own identity on another namespace, even through a cluster store.
	create(t, &provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: "peek"},
		Spec: provv1.KubernetesSpec{RemoteNamespace: teamA}})
	peek := clusterStore("peek-"+platform, ssv2.ClusterSecretStoreSpec{
		SecretStoreSpec:     storeSpec("Kubernetes", "peek", platform),
		AuthenticationScope: ssv2.ProviderNamespace,
	})
	create(t, peek)
	waitReady(t, peek, metav1.ConditionFalse, ssv2.ReasonCrossNamespaceRefused)
}

// TestNamespaceRelabelledIntoClusterStore: labelling a namespace so that a
// ClusterSecretStore's condition admits it syncs its waiting ExternalSecrets.
func TestNamespaceRelabelledIntoClusterStore(t *testing.T) {
	runEso(t, testConfig())
	ctx := context.Background()
	platform := env.Namespace(t, "platform", nil)
	late := env.Namespace(t, "late", nil)
	css := clusterStore("relabel-"+platform, ssv2.ClusterSecretStoreSpec{
		SecretStoreSpec: storeSpec("Fake", "shared", platform),
		Conditions: []ssv2.ClusterSecretStoreCondition{
			{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"eso.example/admit": platform}}},
		},
	})
	es := externalSecret(late, "app", "ClusterSecretStore", css.Name, map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	create(t, fakeConfig(platform, "shared", map[string]string{"k": "v"}), css, es)
	waitReady(t, es, metav1.ConditionFalse, esv1.ReasonStoreNotAllowed)

	var ns corev1.Namespace
	if err := env.Client.Get(ctx, client.ObjectKey{Name: late}, &ns); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(ns.DeepCopy())
	ns.Labels["eso.example/admit"] = platform
	if err := env.Client.Patch(ctx, &ns, patch); err != nil {
		t.Fatal(err)
	}
	waitSecretData(t, late, "app", map[string]string{"k": "v"})
}
