package generation

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	genkinds "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	upgen "github.com/eso-dev/eso/apis/upstreamv1/generators"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/generators/fake"
	"github.com/eso-dev/eso/providers/plugin"
)

// upstreamFakeKinds are upstream's Fake and ClusterGenerator (of Fakes only),
// translated as the v1 compatibility layer does.
var upstreamFakeKinds = []UpstreamKind{
	{Kind: "Fake", New: func() client.Object { return &upgen.Fake{} },
		Translate: func(obj client.Object) (string, client.Object, error) {
			o := obj.(*upgen.Fake)
			return "Fake", &genkinds.Fake{ObjectMeta: o.ObjectMeta, Spec: o.Spec}, nil
		}},
	{Kind: "ClusterGenerator", Cluster: true, New: func() client.Object { return &upgen.ClusterGenerator{} },
		Translate: func(obj client.Object) (string, client.Object, error) {
			o := obj.(*upgen.ClusterGenerator)
			return "Fake", &genkinds.Fake{ObjectMeta: metav1.ObjectMeta{Name: o.Name}, Spec: *o.Spec.Generator.FakeSpec}, nil
		}},
}

func upstreamResolver(t *testing.T, class string, objs ...client.Object) *Resolver {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{genv2.AddToScheme, genkinds.AddToScheme, upgen.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	catalog, err := plugin.NewIndex([]plugin.Registration{fake.Registration})
	if err != nil {
		t.Fatal(err)
	}
	return NewResolver(c, plugin.NewPlugins(catalog, plugin.Deps{Client: c, APIReader: c}), class).WithUpstream(upstreamFakeKinds)
}

// TestUpstreamKindsResolve: a reference with upstream's apiVersion reads the
// upstream object of the ExternalSecret's namespace; without one, eso's kind
// of the same name stands in; an upstream ClusterGenerator is read by name
// and resolves what it references in the ExternalSecret's namespace; a
// configuration of another controller class is left alone.
func TestUpstreamKindsResolve(t *testing.T) {
	ctx := context.Background()
	r := upstreamResolver(t, "",
		&upgen.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "both"}, Spec: genkinds.FakeSpec{Data: map[string]string{"from": "upstream"}}},
		&genkinds.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "both"}, Spec: genkinds.FakeSpec{Data: map[string]string{"from": "eso"}}},
		&genkinds.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "moved"}, Spec: genkinds.FakeSpec{Data: map[string]string{"from": "eso"}}},
		&upgen.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "elsewhere"}, Spec: genkinds.FakeSpec{Data: map[string]string{"from": "team-b"}}},
		&upgen.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "blue"}, Spec: genkinds.FakeSpec{Controller: "blue"}},
		&upgen.ClusterGenerator{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Spec: upgen.ClusterGeneratorSpec{Kind: "Fake",
			Generator: upgen.GeneratorSpec{FakeSpec: &genkinds.FakeSpec{Data: map[string]string{"from": "cluster"}}}}},
	)
	ref := func(kind, name string) esv1.GeneratorRef {
		return esv1.GeneratorRef{APIVersion: UpstreamAPIVersion, Kind: kind, Name: name}
	}
	for _, tc := range []struct {
		ref                        esv1.GeneratorRef
		from, source, refNamespace string
	}{
		{ref("Fake", "both"), "upstream", UpstreamAPIVersion, "team-a"},
		{ref("Fake", "moved"), "eso", KindsAPIVersion, "team-a"},
		{ref("ClusterGenerator", "shared"), "cluster", UpstreamAPIVersion, ""},
	} {
		res, ours, err := r.Resolve(ctx, "team-a", tc.ref)
		if err != nil || !ours {
			t.Fatalf("%s %s: ours %v, %v", tc.ref.Kind, tc.ref.Name, ours, err)
		}
		values, _, err := res.Generator.Generate(ctx, res.Ref, res.Scope)
		if err != nil || string(values["from"]) != tc.from {
			t.Errorf("%s %s: generated from %q (%v), want %q", tc.ref.Kind, tc.ref.Name, values["from"], err, tc.from)
		}
		if res.Source.APIVersion != tc.source || res.Ref.Namespace != tc.refNamespace || res.Scope.Namespace != "team-a" {
			t.Errorf("%s %s: source %s, ref namespace %q, scope %q", tc.ref.Kind, tc.ref.Name, res.Source.APIVersion, res.Ref.Namespace, res.Scope.Namespace)
		}
	}
	// Another namespace's upstream object is not there for team-a: what
	// stands in is eso's kind of that name in team-a, which does not exist.
	res, _, err := r.Resolve(ctx, "team-a", ref("Fake", "elsewhere"))
	if err == nil {
		_, _, err = res.Generator.Generate(ctx, res.Ref, res.Scope)
	}
	if !errors.Is(err, plugin.ErrConfigNotFound) {
		t.Errorf("team-a generating with team-b's upstream Fake: %v, want it not found", err)
	}
	if _, ours, err := r.Resolve(ctx, "team-a", ref("Fake", "blue")); err != nil || ours {
		t.Errorf("a configuration of class blue: ours %v (%v), want it left alone", ours, err)
	}
	if _, _, err := r.Resolve(ctx, "team-a", ref("ClusterGenerator", "missing")); !errors.Is(err, stores.ErrStoreNotFound) {
		t.Errorf("a missing ClusterGenerator: %v", err)
	}
}

// TestStatesOfUpstreamKinds: a state recorded for an upstream object
// revokes through it only when it names its own namespace's object (or an
// upstream ClusterGenerator) and its own namespace's credentials; a state of
// a ClusterGenerator that is gone says so; one of a namespaced object that
// is gone revokes through eso's kind of the same name.
func TestStatesOfUpstreamKinds(t *testing.T) {
	r := upstreamResolver(t, "",
		&upgen.ClusterGenerator{ObjectMeta: metav1.ObjectMeta{Name: "shared"},
			Spec: upgen.ClusterGeneratorSpec{Kind: "Fake", Generator: upgen.GeneratorSpec{FakeSpec: &genkinds.FakeSpec{}}}},
		&upgen.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "own"}},
		&upgen.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "theirs"}},
	)
	state := func(kind, name, refNamespace, credentials string) *genv2.GeneratorState {
		return &genv2.GeneratorState{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "s"}, Spec: genv2.GeneratorStateSpec{
			Generator:            genv2.GeneratorReference{APIVersion: UpstreamAPIVersion, Kind: kind, Name: name},
			ProviderRef:          genv2.ProviderRef{Kind: kind, Name: name, Namespace: refNamespace},
			CredentialsNamespace: credentials,
		}}
	}
	ctx := context.Background()
	for _, st := range []*genv2.GeneratorState{state("ClusterGenerator", "shared", "", "team-a"), state("Fake", "own", "team-a", "team-a")} {
		if gen, err := r.ForState(ctx, st); err != nil || gen.Kind() != st.Spec.Generator.Kind {
			t.Errorf("a state of its own %s: %v", st.Spec.Generator.Kind, err)
		}
	}
	for _, st := range []*genv2.GeneratorState{
		state("ClusterGenerator", "shared", "team-b", "team-a"),
		state("ClusterGenerator", "shared", "", "team-b"),
		state("Fake", "theirs", "team-b", "team-a"),
		state("Fake", "own", "team-a", "team-b"),
	} {
		if _, err := r.ForState(ctx, st); !errors.Is(err, stores.ErrCrossNamespace) {
			t.Errorf("state naming %s %q/%s with credentials of %q: %v, want it refused",
				st.Spec.Generator.Kind, st.Spec.ProviderRef.Namespace, st.Spec.ProviderRef.Name, st.Spec.CredentialsNamespace, err)
		}
	}
	if _, err := r.ForState(ctx, state("ClusterGenerator", "gone", "", "team-a")); err == nil || !strings.Contains(err.Error(), "ClusterGenerator gone is gone") {
		t.Errorf("a state of a ClusterGenerator that is gone: %v", err)
	}
	if gen, err := r.ForState(ctx, state("Fake", "moved", "team-a", "team-a")); err != nil || gen.Kind() != "Fake" {
		t.Errorf("a state of a namespaced object that is gone revokes through eso's kind: %v", err)
	}
}

// TestResolutionHoldsWhatItRead: a sync generates with the configuration
// its resolution read and judged (class included), without reading the
// upstream object again: an edit in between does not reach that sync.
func TestResolutionHoldsWhatItRead(t *testing.T) {
	ctx := context.Background()
	r := upstreamResolver(t, "",
		&upgen.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "f"}, Spec: genkinds.FakeSpec{Data: map[string]string{"v": "read"}}})
	res, ours, err := r.Resolve(ctx, "team-a", esv1.GeneratorRef{APIVersion: UpstreamAPIVersion, Kind: "Fake", Name: "f"})
	if err != nil || !ours {
		t.Fatalf("ours %v, %v", ours, err)
	}
	var edited upgen.Fake
	if err := r.reader.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "f"}, &edited); err != nil {
		t.Fatal(err)
	}
	edited.Spec = genkinds.FakeSpec{Controller: "other", Data: map[string]string{"v": "edited"}}
	if err := r.reader.(client.Client).Update(ctx, &edited); err != nil {
		t.Fatal(err)
	}
	values, _, err := res.Generator.Generate(ctx, res.Ref, res.Scope)
	if err != nil || string(values["v"]) != "read" {
		t.Errorf("generated %q (%v), want what resolution read", values["v"], err)
	}
}
