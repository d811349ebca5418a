package migrate

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	provv2 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
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
		"AWSSecretManager.provider.secretstore.external-secrets.io/v2alpha1 eso-system/shared-aws",
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
			// The configuration moves to the admin's namespace; the
			// credentials stay where the v1 store's references name.
			if c.Name == "shared-aws" && (c.Spec.ProviderConfig.ProviderRef.Namespace != "eso-system" || c.Spec.CredentialsNamespace != "platform") {
				t.Errorf("shared-aws: configuration in %q, credentials in %q; want eso-system and platform",
					c.Spec.ProviderConfig.ProviderRef.Namespace, c.Spec.CredentialsNamespace)
			}
			if c.Name == "referent" && c.Spec.CredentialsNamespace != "" {
				t.Errorf("referent: credentialsNamespace %q under ManifestNamespace", c.Spec.CredentialsNamespace)
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
	for i, o := range objs.Present {
		objs.Present[i], _ = serverDefaults(o)
	}
	again := Build(objs, Options{ClusterConfigNamespace: "eso-system", Defaults: serverDefaults})
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

// TestClusterStoreNeedsAConfigNamespace: without --cluster-config-namespace
// every ClusterSecretStore with a configuration to write is refused with
// what to pass (never written to the namespace its credentials are in,
// which a tenant may write), and its users stay.
func TestClusterStoreNeedsAConfigNamespace(t *testing.T) {
	objs, err := ReadFiles([]string{filepath.Join("testdata", "upstream.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	p := Build(objs, Options{})
	for _, name := range []string{"referent", "shared-aws"} {
		found := false
		for _, r := range p.Refused {
			found = found || strings.HasPrefix(r, "ClusterSecretStore "+name+" (external-secrets.io/v1): ") && strings.Contains(r, "--cluster-config-namespace")
		}
		if !found {
			t.Errorf("refused %q; want %s with the flag to pass", p.Refused, name)
		}
	}
	if strings.Join(p.MissingConfigNamespace, ",") != "shared-aws,referent" {
		t.Errorf("missing config namespace for %q; want shared-aws, referent", p.MissingConfigNamespace)
	}
	for _, o := range p.Create {
		if o.GetObjectKind().GroupVersionKind().Group == provv2.GroupVersion.Group && o.GetNamespace() != "team" {
			t.Errorf("a configuration is written to %s without --cluster-config-namespace", describe(o))
		}
	}
	for _, c := range p.Changes {
		if strings.Contains(c, "everywhere") {
			t.Errorf("a user of a store not migrated moved: %s", c)
		}
	}
}

// serverDefaults fills what the API server defaults in the objects a
// migration writes, as ServerDefaults' dry run does.
func serverDefaults(o client.Object) (client.Object, error) {
	d := o.DeepCopyObject().(client.Object)
	store := func(s *ssv2.SecretStoreSpec) {
		if s.RefreshInterval == nil {
			s.RefreshInterval = &metav1.Duration{Duration: 5 * time.Minute}
		}
		if s.GatingPolicy == "" {
			s.GatingPolicy = ssv2.GatingEnabled
		}
		if s.CachingPolicy == "" {
			s.CachingPolicy = ssv2.CachingProviderDefined
		}
	}
	switch x := d.(type) {
	case *ssv2.SecretStore:
		store(&x.Spec)
	case *ssv2.ClusterSecretStore:
		store(&x.Spec.SecretStoreSpec)
		if x.Spec.AuthenticationScope == "" {
			x.Spec.AuthenticationScope = ssv2.ProviderNamespace
		}
	case *provv2.Vault:
		if x.Spec.Path == "" {
			x.Spec.Path = "secret"
		}
		if x.Spec.Version == "" {
			x.Spec.Version = "v2"
		}
	}
	return d, nil
}

// TestAConfigurationThereMustMatchExactly: a provider configuration of the
// name already there is accepted only with exactly the planned spec (the
// API server's defaults aside). One that holds every planned field plus
// others (a look-alike, e.g. one naming a CA or Vault namespace of its
// maker's choosing) is refused, naming it, and its store's users stay.
func TestAConfigurationThereMustMatchExactly(t *testing.T) {
	objs, err := ReadFiles([]string{filepath.Join("testdata", "upstream.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	planned := Build(objs, Options{ClusterConfigNamespace: "eso-system", Defaults: serverDefaults})
	var vault *provv2.Vault
	for _, o := range planned.Create {
		if v, ok := o.(*provv2.Vault); ok {
			vault = v
		}
	}
	if vault == nil {
		t.Fatal("no Vault configuration planned")
	}

	// The same, with the server's defaults: taken as a run before's.
	d, _ := serverDefaults(vault)
	objs.Present = []client.Object{d}
	p := Build(objs, Options{ClusterConfigNamespace: "eso-system", Defaults: serverDefaults})
	for _, r := range p.Refused {
		if strings.Contains(r, "team/vault") {
			t.Errorf("the planned configuration with the server's defaults is refused: %s", r)
		}
	}

	// The same plus fields the plan does not set: refused.
	for name, extra := range map[string]func(*provv2.Vault){
		"namespace": func(v *provv2.Vault) { v.Spec.Namespace = "attacker" },
		"caProvider": func(v *provv2.Vault) {
			v.Spec.CAProvider = &provv2.CAProvider{Type: "ConfigMap", Name: "ca", Key: "ca.crt"}
		},
		"caBundle": func(v *provv2.Vault) { v.Spec.CABundle = []byte("-----BEGIN CERTIFICATE-----") },
	} {
		lookalike := d.DeepCopyObject().(*provv2.Vault)
		extra(lookalike)
		objs.Present = []client.Object{lookalike}
		p := Build(objs, Options{ClusterConfigNamespace: "eso-system", Defaults: serverDefaults})
		found := false
		for _, r := range p.Refused {
			found = found || strings.Contains(r, "SecretStore team/vault (external-secrets.io/v1): Vault.provider.secretstore.external-secrets.io/v2alpha1 team/vault exists with another spec")
		}
		if !found {
			t.Errorf("%s: a look-alike configuration with an extra field is accepted; refused %q", name, p.Refused)
		}
		for _, c := range p.Changes {
			if strings.Contains(c, "team/app: spec.secretStoreRef") {
				t.Errorf("%s: a user of the refused store moved: %s", name, c)
			}
		}
	}
}

// TestEachStoreItsOwnUsers: every re-pointed object names the stores it
// waits for, and only those: one tenant's store never holds back another
// tenant's objects.
func TestEachStoreItsOwnUsers(t *testing.T) {
	objs, err := ReadFiles([]string{filepath.Join("testdata", "upstream.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	p := Build(objs, Options{ClusterConfigNamespace: "eso-system"})
	if len(p.Needs) != len(p.Repoint) {
		t.Fatalf("%d needs for %d objects", len(p.Needs), len(p.Repoint))
	}
	got := map[string][]string{}
	for j, o := range p.Repoint {
		for _, i := range p.Needs[j] {
			got[o.GetName()] = append(got[o.GetName()], p.Stores[i].Store.GetName())
		}
	}
	want := map[string]string{"app": "vault,shared-aws", "push": "vault", "everywhere": "referent"}
	for name, stores := range want {
		if strings.Join(got[name], ",") != stores {
			t.Errorf("%s waits for %q; want %s", name, got[name], stores)
		}
	}
	for _, sp := range p.Stores {
		for _, o := range sp.Create {
			if o.GetName() != sp.Store.GetName() {
				t.Errorf("store %s creates %s", sp.Store.GetName(), describe(o))
			}
		}
	}
}

// TestStoresThatCannotWorkAreRefused: a namespaced plugin store whose
// client certificate is in another namespace can never become Ready: the
// plan refuses it, naming the field, instead of waiting for it.
func TestStoresThatCannotWorkAreRefused(t *testing.T) {
	objs, err := ReadFiles([]string{filepath.Join("testdata", "upstream.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	broken := v1stores.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: "mallory", Name: "plugin"},
		Spec: v1stores.SecretStoreSpec{Provider: &v1stores.SecretStoreProvider{Plugin: &v1stores.PluginProvider{
			Address:     "eso-provider.eso-system.svc:8443",
			Auth:        &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: "core-cert", Namespace: "eso-system"}},
			ProviderRef: ssv2.ProviderRef{Kind: "Fake", Name: "cfg"},
		}}}}
	objs.SecretStores = append(objs.SecretStores, broken)
	p := Build(objs, Options{ClusterConfigNamespace: "eso-system"})
	found := false
	for _, r := range p.Refused {
		found = found || strings.HasPrefix(r, "SecretStore mallory/plugin (external-secrets.io/v1): spec.provider.plugin.auth.clientCertificate")
	}
	if !found {
		t.Errorf("refused %q; want mallory/plugin refused", p.Refused)
	}
	for _, sp := range p.Stores {
		if sp.Store.GetNamespace() == "mallory" {
			t.Errorf("the plan waits for %s", describe(sp.Store))
		}
	}
}
