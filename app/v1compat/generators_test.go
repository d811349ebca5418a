package v1compat

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	upgen "github.com/eso-dev/eso/apis/upstreamv1/generators"
)

// TestClusterGeneratorTranslation: an upstream ClusterGenerator stands for
// eso's kind its spec.kind names, with the member of that kind, its name
// and UID and no namespace; a member of another kind, or a kind eso does
// not ship, is refused by name; an MFA member loses the algorithm upstream
// ignores.
func TestClusterGeneratorTranslation(t *testing.T) {
	cg := func(kind upgen.GeneratorKind, g upgen.GeneratorSpec) *upgen.ClusterGenerator {
		return &upgen.ClusterGenerator{ObjectMeta: metav1.ObjectMeta{Name: "shared", UID: "cg-uid"}, Spec: upgen.ClusterGeneratorSpec{Kind: kind, Generator: g}}
	}
	kind, cfg, err := ClusterGenerator(cg("Password", upgen.GeneratorSpec{PasswordSpec: &genv1.PasswordSpec{Length: 42}}))
	pw, ok := cfg.(*genv1.Password)
	if err != nil || kind != "Password" || !ok || pw.Spec.Length != 42 || pw.Name != "shared" || pw.UID != "cg-uid" || pw.Namespace != "" {
		t.Fatalf("Password member: %s %+v (%v)", kind, cfg, err)
	}
	_, cfg, err = ClusterGenerator(cg("MFA", upgen.GeneratorSpec{MFASpec: &genv1.MFASpec{Algorithm: "sha512", Length: 8}}))
	if mfa := cfg.(*genv1.MFA); err != nil || mfa.Spec.Algorithm != "" || mfa.Spec.Length != 8 {
		t.Fatalf("MFA member: %+v (%v), want the algorithm dropped", cfg, err)
	}
	for _, tc := range []struct {
		cg   *upgen.ClusterGenerator
		says string
	}{
		{cg("UUID", upgen.GeneratorSpec{FakeSpec: &genv1.FakeSpec{}}), "no spec.generator member for it"},
		{cg("Webhook", upgen.GeneratorSpec{}), "Webhook is not one eso ships"},
	} {
		if _, _, err := ClusterGenerator(tc.cg); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("kind %s: %v, want it to say %q", tc.cg.Spec.Kind, err, tc.says)
		}
	}
}

// TestUpstreamMFAIgnoresAlgorithm: upstream's namespaced MFA translates
// with the algorithm dropped, every other kind with its spec as it is.
func TestUpstreamMFAIgnoresAlgorithm(t *testing.T) {
	for _, k := range GeneratorKinds() {
		if k.Kind != "MFA" {
			continue
		}
		_, cfg, err := k.Translate(&upgen.MFA{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "totp"}, Spec: genv1.MFASpec{Algorithm: "SHA-256", TimePeriod: 60}})
		if mfa := cfg.(*genv1.MFA); err != nil || mfa.Spec.Algorithm != "" || mfa.Spec.TimePeriod != 60 || mfa.Namespace != "team" {
			t.Fatalf("MFA: %+v (%v)", cfg, err)
		}
		return
	}
	t.Fatal("no upstream MFA kind")
}

// TestEveryUpstreamKindTranslates: each upstream kind served translates
// into eso's kind of the same name, keeping its name and namespace; a
// kind whose spec type were not eso's would panic here, not in eso.
func TestEveryUpstreamKindTranslates(t *testing.T) {
	for _, k := range GeneratorKinds() {
		if k.Cluster {
			continue
		}
		obj := k.New()
		obj.SetNamespace("team")
		obj.SetName("g")
		kind, cfg, err := k.Translate(obj)
		if err != nil || kind != k.Kind || cfg.GetName() != "g" || cfg.GetNamespace() != "team" {
			t.Errorf("%s: %s %v (%v)", k.Kind, kind, cfg, err)
		}
		if got := reflect.TypeOf(cfg).Elem().Name(); got != k.Kind {
			t.Errorf("%s translates into a %s", k.Kind, got)
		}
	}
}
