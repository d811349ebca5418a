package stores

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

func namespacedStore(ns, refNS string) *Store {
	return FromSecretStore(&ssv2.SecretStore{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"},
		Spec: ssv2.SecretStoreSpec{ProviderConfig: ssv2.ProviderConfig{
			ProviderRef: ssv2.ProviderRef{Kind: "Fake", Name: "cfg", Namespace: refNS},
		}},
	})
}

func clusterStore(scope ssv2.AuthenticationScope) *Store {
	return FromClusterSecretStore(&ssv2.ClusterSecretStore{
		ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Spec: ssv2.ClusterSecretStoreSpec{
			SecretStoreSpec: ssv2.SecretStoreSpec{ProviderConfig: ssv2.ProviderConfig{
				ProviderRef: ssv2.ProviderRef{Kind: "Fake", Name: "cfg", Namespace: "platform"},
			}},
			AuthenticationScope: scope,
		},
	})
}

func TestProviderRefStaysInTheStoreNamespace(t *testing.T) {
	for refNS, wantErr := range map[string]bool{"": false, "team": false, "other": true} {
		ref, err := namespacedStore("team", refNS).ProviderRef()
		if wantErr != errors.Is(err, ErrCrossNamespace) {
			t.Errorf("providerRef.namespace %q: error %v", refNS, err)
		}
		if !wantErr && ref.Namespace != "team" {
			t.Errorf("providerRef.namespace %q resolved to namespace %q", refNS, ref.Namespace)
		}
	}
	ref, err := clusterStore(ssv2.ProviderNamespace).ProviderRef()
	if err != nil || ref.Namespace != "platform" {
		t.Errorf("cluster store ref = %+v, %v", ref, err)
	}
}

func withCredentials(s *Store, namespace string) *Store {
	s.Cluster.CredentialsNamespace = namespace
	return s
}

func TestScope(t *testing.T) {
	cases := []struct {
		name  string
		store *Store
		want  plugin.Scope
	}{
		{"SecretStore", namespacedStore("team", ""), plugin.Scope{Namespace: "team"}},
		{"ClusterSecretStore ProviderNamespace", clusterStore(ssv2.ProviderNamespace), plugin.Scope{Namespace: "platform"}},
		{"ClusterSecretStore ManifestNamespace", clusterStore(ssv2.ManifestNamespace), plugin.Scope{Namespace: "app"}},
		{"ClusterSecretStore ProviderNamespace, credentialsNamespace", withCredentials(clusterStore(ssv2.ProviderNamespace), "vault-auth"), plugin.Scope{Namespace: "vault-auth"}},
	}
	for _, tc := range cases {
		if got := tc.store.Scope("app"); got != tc.want {
			t.Errorf("%s: Scope(app) = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestAllowsNamespace(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gold-ns", Labels: map[string]string{"tier": "gold"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "plain"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "my-team-a"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
	).Build()
	conds := []ssv2.ClusterSecretStoreCondition{
		{Namespaces: []string{"listed"}},
		{NamespaceRegexes: []string{"team-.*"}},
		{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}},
	}
	for ns, want := range map[string]bool{
		"listed":    true,
		"team-a":    true,
		"my-team-a": false, // regexes match the whole name
		"gold-ns":   true,
		"plain":     false,
	} {
		got, err := AllowsNamespace(context.Background(), reader, conds, ns)
		if err != nil || got != want {
			t.Errorf("AllowsNamespace(%s) = %v, %v; want %v", ns, got, err, want)
		}
	}
	if ok, err := AllowsNamespace(context.Background(), reader, nil, "plain"); !ok || err != nil {
		t.Errorf("no conditions must allow every namespace: %v %v", ok, err)
	}
}

func TestValidateConditions(t *testing.T) {
	bad := [][]ssv2.ClusterSecretStoreCondition{
		{{NamespaceRegexes: []string{"team-("}}},
		{{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Sometimes"}}}}},
	}
	for _, c := range bad {
		if err := ValidateConditions(c); err == nil {
			t.Errorf("ValidateConditions(%+v) accepted an invalid condition", c)
		}
	}
	if err := ValidateConditions([]ssv2.ClusterSecretStoreCondition{{NamespaceRegexes: []string{"team-.*"}}}); err != nil {
		t.Error(err)
	}
}
