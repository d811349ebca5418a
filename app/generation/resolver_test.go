package generation

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	genkinds "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// TestMisspelledGeneratorKindNamesTheNearest: an ExternalSecret's
// generatorRef.kind that is a typo of a compiled-in kind (or of Generator,
// ClusterGenerator) is reported as unknown with the nearest kind, one far
// from every kind as not compiled in; both keep the not-compiled-in outcome.
func TestMisspelledGeneratorKindNamesTheNearest(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := genv2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	catalog, err := plugin.NewIndex([]plugin.Registration{
		{Name: "password", Kind: "Password", NewGenerator: func(plugin.Deps) plugin.Generator { return nil }},
		{Name: "uuid", Kind: "UUID", NewGenerator: func(plugin.Deps) plugin.Generator { return nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := NewResolver(ctrlfake.NewClientBuilder().WithScheme(scheme).Build(), plugin.NewPlugins(catalog, plugin.Deps{}), "")
	for _, tc := range []struct {
		ref  esv1.GeneratorRef
		want string
	}{
		{esv1.GeneratorRef{Kind: "Pasword", Name: "p"}, "unknown generator kind Pasword: did you mean Password?"},
		{esv1.GeneratorRef{Kind: "Pasword", Name: "p", APIVersion: KindsAPIVersion}, "unknown generator kind Pasword: did you mean Password?"},
		{esv1.GeneratorRef{Kind: "ClusterGenerater", Name: "g"}, "unknown generator kind ClusterGenerater: did you mean ClusterGenerator?"},
		{esv1.GeneratorRef{Kind: "ECRAuthorizationToken", Name: "e"},
			"provider not compiled into this binary: generator kind ECRAuthorizationToken (see `eso providers`)"},
	} {
		_, _, err := r.Resolve(context.Background(), "team-a", tc.ref)
		if err == nil || err.Error() != tc.want {
			t.Errorf("kind %s: %v, want %q", tc.ref.Kind, err, tc.want)
		}
		if !errors.Is(err, stores.ErrNotCompiledIn) || outcomes.Of(err) != outcomes.Of(stores.ErrNotCompiledIn) {
			t.Errorf("kind %s: outcome %+v, want that of a kind not compiled in", tc.ref.Kind, outcomes.Of(err))
		}
	}
}

// TestDirectKindWithAControllerClass: a generator configuration that names
// a controller class (VaultDynamicSecret's spec.controller), referenced
// directly or through a Generator, is this eso's only when the class is its
// own; kinds without a class, and a configuration not found yet, are its
// own.
func TestDirectKindWithAControllerClass(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := genkinds.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	vault := func(name, class string) *genkinds.VaultDynamicSecret {
		return &genkinds.VaultDynamicSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name},
			Spec: genkinds.VaultDynamicSecretSpec{Controller: class}}
	}
	if err := genv2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	generator := func(name, config string) *genv2.Generator {
		return &genv2.Generator{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name}, Spec: genv2.GeneratorSpec{
			ProviderConfig: genv2.ProviderConfig{ProviderRef: genv2.ProviderRef{Kind: "VaultDynamicSecret", Name: config}}}}
	}
	reader := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(vault("default", ""), vault("blue", "blue"),
		generator("via-default", "default"), generator("via-blue", "blue")).Build()
	catalog, err := plugin.NewIndex([]plugin.Registration{
		{Name: "vault-dynamic-secret", Kind: "VaultDynamicSecret", NewConfig: func() client.Object { return &genkinds.VaultDynamicSecret{} },
			NewGenerator: func(plugin.Deps) plugin.Generator { return nil }},
		{Name: "uuid", Kind: "UUID", NewConfig: func() client.Object { return &genkinds.UUID{} },
			NewGenerator: func(plugin.Deps) plugin.Generator { return nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		class, kind, name string
		ours              bool
	}{
		{"", "VaultDynamicSecret", "default", true},
		{"", "VaultDynamicSecret", "blue", false},
		{"blue", "VaultDynamicSecret", "blue", true},
		{"blue", "VaultDynamicSecret", "default", false},
		{"blue", "VaultDynamicSecret", "not-yet", true},
		{"blue", "UUID", "id", true},
		{"", "Generator", "via-default", true},
		{"", "Generator", "via-blue", false},
	} {
		r := NewResolver(reader, plugin.NewPlugins(catalog, plugin.Deps{}), tc.class)
		_, ours, err := r.Resolve(context.Background(), "team-a", esv1.GeneratorRef{Kind: tc.kind, Name: tc.name})
		if err != nil || ours != tc.ours {
			t.Errorf("eso of class %q, %s %s: ours %v (%v), want %v", tc.class, tc.kind, tc.name, ours, err, tc.ours)
		}
	}
}
