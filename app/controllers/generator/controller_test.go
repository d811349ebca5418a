package generator

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/generation"
	"github.com/eso-dev/eso/providers/plugin"
)

// recorder is a generator kind that records each configuration it was
// asked to validate, and as whom.
type recorder struct {
	mu        sync.Mutex
	validated []string
	// fail is what Validate answers.
	fail error
}

func (r *recorder) Kind() string { return "Recorder" }
func (r *recorder) Generate(context.Context, plugin.Ref, plugin.Scope) (map[string][]byte, plugin.State, error) {
	return nil, nil, nil
}
func (r *recorder) Cleanup(context.Context, plugin.Ref, plugin.Scope, plugin.State) error {
	return nil
}
func (r *recorder) Validate(_ context.Context, ref plugin.Ref, scope plugin.Scope) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.validated = append(r.validated, ref.Namespace+"/"+ref.Name+" as "+scope.Namespace)
	return r.fail
}

func reconciler(t *testing.T, cluster bool, objs ...client.Object) (*Reconciler, *recorder) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := genv2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&genv2.Generator{}, &genv2.ClusterGenerator{}).Build()
	rec := &recorder{}
	catalog, err := plugin.NewIndex([]plugin.Registration{{Name: "recorder", Kind: "Recorder",
		NewGenerator: func(plugin.Deps) plugin.Generator { return rec }}})
	if err != nil {
		t.Fatal(err)
	}
	resolver := generation.NewResolver(c, plugin.NewPlugins(catalog, plugin.Deps{}), "")
	return &Reconciler{Client: c, Resolver: resolver, Cluster: cluster}, rec
}

func generatorIn(ns, name, configNamespace string) *genv2.Generator {
	return &genv2.Generator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1},
		Spec: genv2.GeneratorSpec{ProviderConfig: genv2.ProviderConfig{
			ProviderRef: genv2.ProviderRef{Kind: "Recorder", Name: "config", Namespace: configNamespace}}}}
}

func readyOf(t *testing.T, r *Reconciler, obj client.Object, status *genv2.GeneratorStatus) *metav1.Condition {
	t.Helper()
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(obj)}); err != nil {
		t.Fatalf("%s: %v", obj.GetName(), err)
	}
	if err := r.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	return meta.FindStatusCondition(status.Conditions, ssv2.ConditionReady)
}

// TestGeneratorStaysInItsNamespace: a Generator naming another namespace's
// configuration is refused before the generator is asked anything; one
// naming its own is validated there, as its own namespace.
func TestGeneratorStaysInItsNamespace(t *testing.T) {
	elsewhere, own := generatorIn("team-a", "elsewhere", "victim"), generatorIn("team-a", "own", "")
	r, rec := reconciler(t, false, elsewhere, own)
	if c := readyOf(t, r, elsewhere, &elsewhere.Status); c == nil || c.Status != metav1.ConditionFalse || c.Reason != ssv2.ReasonCrossNamespaceRefused {
		t.Errorf("Generator naming another namespace: Ready %+v, want False/%s", c, ssv2.ReasonCrossNamespaceRefused)
	}
	if len(rec.validated) != 0 {
		t.Fatalf("the generator was asked about another namespace: %v", rec.validated)
	}
	if c := readyOf(t, r, own, &own.Status); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("Generator in its own namespace: Ready %+v", c)
	}
	if len(rec.validated) != 1 || rec.validated[0] != "team-a/config as team-a" {
		t.Errorf("validated %v, want team-a/config as team-a", rec.validated)
	}
}

// TestClusterGeneratorAuthenticationScope: a ClusterGenerator validates its
// configuration with the credentials of the configuration's namespace, and
// with ManifestNamespace with none (each ExternalSecret's namespace gives
// them at generation time).
func TestClusterGeneratorAuthenticationScope(t *testing.T) {
	provider := &genv2.ClusterGenerator{ObjectMeta: metav1.ObjectMeta{Name: "provider", Generation: 1}}
	provider.Spec.ProviderConfig.ProviderRef = genv2.ProviderRef{Kind: "Recorder", Name: "config", Namespace: "platform"}
	manifest := provider.DeepCopy()
	manifest.Name = "manifest"
	manifest.Spec.AuthenticationScope = ssv2.ManifestNamespace
	r, rec := reconciler(t, true, provider, manifest)
	for _, cg := range []*genv2.ClusterGenerator{provider, manifest} {
		if c := readyOf(t, r, cg, &cg.Status); c == nil || c.Status != metav1.ConditionTrue {
			t.Fatalf("%s: Ready %+v", cg.Name, c)
		}
	}
	if want := []string{"platform/config as platform", "platform/config as "}; len(rec.validated) != 2 || rec.validated[0] != want[0] || rec.validated[1] != want[1] {
		t.Errorf("validated %q, want %q", rec.validated, want)
	}
}

// TestUndecodableGeneratorIsReportedNotValidated: a Generator whose spec
// eso cannot decode gets Ready=False InvalidSpec and nothing of it is used.
func TestUndecodableGeneratorIsReportedNotValidated(t *testing.T) {
	var broken genv2.Generator
	raw := `{"apiVersion":"generator.external-secrets.io/v2alpha1","kind":"Generator",
		"metadata":{"namespace":"team-a","name":"broken","generation":1},
		"spec":{"refreshInterval":"banana","providerConfig":{"providerRef":{"kind":"Recorder","name":"config"}}}}`
	if err := json.Unmarshal([]byte(raw), &broken); err != nil {
		t.Fatalf("lenient decoding failed: %v", err)
	}
	r, rec := reconciler(t, false, &broken)
	if c := readyOf(t, r, &broken, &broken.Status); c == nil || c.Status != metav1.ConditionFalse || c.Reason != ssv2.ReasonInvalidSpec {
		t.Errorf("Ready %+v, want False/%s", c, ssv2.ReasonInvalidSpec)
	}
	if len(rec.validated) != 0 {
		t.Errorf("an undecodable Generator was validated: %v", rec.validated)
	}
}

// TestMisspelledKindNamesTheNearest: a Generator whose providerRef.kind is a
// typo of a compiled-in kind is reported as unknown with the nearest kind,
// one far from every kind as not compiled in.
func TestMisspelledKindNamesTheNearest(t *testing.T) {
	for kind, want := range map[string]string{
		"Recordr":  "unknown generator kind Recordr: did you mean Recorder?",
		"Password": "generator kind Password is not compiled into this eso binary",
	} {
		g := generatorIn("team-a", "gen", "")
		g.Spec.ProviderConfig.ProviderRef.Kind = kind
		r, _ := reconciler(t, false, g)
		c := readyOf(t, r, g, &g.Status)
		if c == nil || c.Reason != ssv2.ReasonProviderNotCompiledIn || !strings.HasPrefix(c.Message, want) {
			t.Errorf("kind %s: Ready %+v, want %s %q", kind, c, ssv2.ReasonProviderNotCompiledIn, want)
		}
	}
}
