package migrate

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	provv2 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// TestPlanOfUpstreamManifests: from an upstream user's files, each store
// eso can serve becomes a v2alpha1 store and configuration that reference
// the same credentials (never copy them); exactly the references that meant
// a migrated v1 store move; a refused store and its users stay, reported.
func TestPlanOfUpstreamManifests(t *testing.T) {
	objs, err := ReadFiles([]string{filepath.Join("testdata", "upstream.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	p := Build(objs, Options{ClusterConfigNamespace: "eso-system"})
	var created []string
	for _, o := range p.Create {
		created = append(created, describe(o))
	}
	want := []string{
		"Vault.provider.secretstore.external-secrets.io/v2alpha1 team/vault",
		"SecretStore.secretstore.external-secrets.io/v2alpha1 team/vault",
		"AWSSecretManager.provider.secretstore.external-secrets.io/v2alpha1 platform/shared-aws",
		"ClusterSecretStore.secretstore.external-secrets.io/v2alpha1 shared-aws",
		"Fake.provider.secretstore.external-secrets.io/v2alpha1 eso-system/referent",
		"ClusterSecretStore.secretstore.external-secrets.io/v2alpha1 referent",
	}
	if strings.Join(created, "\n") != strings.Join(want, "\n") {
		t.Errorf("creates\n%s\nwant\n%s", strings.Join(created, "\n"), strings.Join(want, "\n"))
	}
	for _, o := range p.Create {
		switch c := o.(type) {
		case *provv2.Vault:
			if c.Spec.Auth.TokenSecretRef == nil || c.Spec.Auth.TokenSecretRef.Name != "vault-token" {
				t.Errorf("the Vault configuration does not reference the token Secret: %+v", c.Spec.Auth)
			}
		case *ssv2.SecretStore:
			if c.Spec.RefreshInterval == nil || c.Spec.RefreshInterval.Seconds() != 60 || c.Spec.ProviderConfig.ProviderRef.Name != "vault" {
				t.Errorf("the v2alpha1 SecretStore lost its refresh interval or configuration: %+v", c.Spec)
			}
		case *ssv2.ClusterSecretStore:
			if c.Name == "shared-aws" && (c.Spec.AuthenticationScope != ssv2.ProviderNamespace || len(c.Spec.Conditions) != 1) {
				t.Errorf("shared-aws: scope %s, conditions %v", c.Spec.AuthenticationScope, c.Spec.Conditions)
			}
			if c.Name == "referent" && c.Spec.AuthenticationScope != ssv2.ManifestNamespace {
				t.Errorf("a store whose references name no namespace must keep resolving them per ExternalSecret: %s", c.Spec.AuthenticationScope)
			}
		}
	}
	wantChanges := []string{
		`ClusterExternalSecret everywhere: spec.secretStoreRef.apiVersion: "" -> "secretstore.external-secrets.io/v2alpha1"`,
		`ExternalSecret team/app: spec.data[0].sourceRef.storeRef.apiVersion: "" -> "secretstore.external-secrets.io/v2alpha1"`,
		`ExternalSecret team/app: spec.secretStoreRef.apiVersion: "" -> "secretstore.external-secrets.io/v2alpha1"`,
		`PushSecret team/push: spec.secretStoreRefs[0].apiVersion: "" -> "secretstore.external-secrets.io/v2alpha1"`,
	}
	if strings.Join(p.Changes, "\n") != strings.Join(wantChanges, "\n") {
		t.Errorf("changes\n%s\nwant\n%s", strings.Join(p.Changes, "\n"), strings.Join(wantChanges, "\n"))
	}
	if len(p.Refused) != 1 || !strings.Contains(p.Refused[0], "SecretStore team/ldap (external-secrets.io/v1): invalid provider configuration: spec.provider.vault.auth.ldap: not supported") {
		t.Errorf("refused %q; want the ldap store named with its field", p.Refused)
	}
	var out bytes.Buffer
	if err := PrintYAML(&out, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: Vault", "name: vault-token", "apiVersion: secretstore.external-secrets.io/v2alpha1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the printed manifests lack %q", want)
		}
	}
	if strings.Contains(out.String(), "resourceVersion") {
		t.Errorf("printed manifests carry a resourceVersion")
	}

	// Back: nothing while no store was migrated; then only references to
	// the v2alpha1 stores the migration made.
	if back := Build(objs, Options{Direction: ToV1}); len(back.Changes) != 0 {
		t.Errorf("rollback with nothing migrated changes %q", back.Changes)
	}
	objs.Present = p.Create
	back := Build(objs, Options{Direction: ToV1})
	if len(back.Create) != 0 || len(back.Changes) != 1 || !strings.Contains(back.Changes[0], `ExternalSecret team/already-v2: spec.secretStoreRef.apiVersion: "secretstore.external-secrets.io/v2alpha1" -> "external-secrets.io/v1"`) {
		t.Errorf("rollback plan: creates %d, changes %q", len(back.Create), back.Changes)
	}

	// Run again over what it made (with the API server's defaults added):
	// nothing to create, the same references move.
	for _, o := range objs.Present {
		if s, ok := o.(*ssv2.SecretStore); ok {
			s.Spec.GatingPolicy, s.Spec.CachingPolicy = ssv2.GatingEnabled, ssv2.CachingProviderDefined
		}
	}
	again := Build(objs, Options{ClusterConfigNamespace: "eso-system"})
	if len(again.Create) != 0 || len(again.Changes) != len(wantChanges) {
		t.Errorf("second run creates %d, changes %d; want 0 and %d", len(again.Create), len(again.Changes), len(wantChanges))
	}
}

// TestNeverTakesOverAStoreOfTheSameName: a v2alpha1 store (or provider
// configuration) already there with another spec stops that store's
// migration; its users keep the v1 store.
func TestNeverTakesOverAStoreOfTheSameName(t *testing.T) {
	objs, err := ReadFiles([]string{filepath.Join("testdata", "upstream.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	other := &ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "vault"},
		Spec: ssv2.SecretStoreSpec{ProviderConfig: ssv2.ProviderConfig{ProviderRef: ssv2.ProviderRef{Kind: "Vault", Name: "elsewhere"}}}}
	other.SetGroupVersionKind(ssv2.GroupVersion.WithKind("SecretStore"))
	objs.Present = []client.Object{other}
	p := Build(objs, Options{ClusterConfigNamespace: "eso-system"})
	found := false
	for _, r := range p.Refused {
		found = found || strings.Contains(r, "SecretStore team/vault (external-secrets.io/v1): SecretStore.secretstore.external-secrets.io/v2alpha1 team/vault exists with another spec")
	}
	if !found {
		t.Errorf("refused %q; want team/vault refused", p.Refused)
	}
	for _, c := range p.Changes {
		if strings.Contains(c, "team/app: spec.secretStoreRef") || strings.Contains(c, "PushSecret team/push") {
			t.Errorf("a user of the store not migrated moved: %s", c)
		}
	}
}

// TestReferentClusterStoreNeedsAConfigNamespace: without
// --cluster-config-namespace a store whose credentials resolve per
// ExternalSecret is refused with what to pass, and its users stay.
func TestReferentClusterStoreNeedsAConfigNamespace(t *testing.T) {
	objs, err := ReadFiles([]string{filepath.Join("testdata", "upstream.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	p := Build(objs, Options{})
	found := false
	for _, r := range p.Refused {
		found = found || strings.Contains(r, "ClusterSecretStore referent (external-secrets.io/v1): its credentials resolve in each ExternalSecret's namespace") && strings.Contains(r, "--cluster-config-namespace")
	}
	if !found {
		t.Errorf("refused %q; want the referent store with the flag to pass", p.Refused)
	}
	for _, c := range p.Changes {
		if strings.Contains(c, "everywhere") {
			t.Errorf("a user of a store not migrated moved: %s", c)
		}
	}
}
