package migrate

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv2 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	upgen "github.com/eso-dev/eso/apis/upstreamv1/generators"
)

// TestPlanOfUpstreamGenerators: each upstream generator object moves to
// eso's kind of the same name with the spec it is served with (an MFA loses
// the algorithm upstream ignores), unless eso's kind of that name holds
// another spec; ClusterGenerators stay, noted; a rollback moves nothing.
func TestPlanOfUpstreamGenerators(t *testing.T) {
	upstream := func(obj client.Object, kind string) client.Object {
		obj.GetObjectKind().SetGroupVersionKind(upgen.GroupVersion.WithKind(kind))
		return obj
	}
	objs := Objects{
		Generators: []client.Object{
			upstream(&upgen.Password{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "db", UID: "u1", ResourceVersion: "7"},
				Spec: genv1.PasswordSpec{Length: 16}}, "Password"),
			upstream(&upgen.MFA{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "totp"},
				Spec: genv1.MFASpec{Algorithm: "sha256"}}, "MFA"),
			upstream(&upgen.UUID{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "taken"}}, "UUID"),
			upstream(&upgen.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "fixed", Finalizers: []string{"argocd.argoproj.io/finalizer"}},
				Spec: genv1.FakeSpec{Data: map[string]string{"a": "b"}}}, "Fake"),
			upstream(&upgen.UUID{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "copied-before"}, Spec: genv1.UUIDSpec{SecretKey: "new"}}, "UUID"),
		},
		ClusterGenerators: []upgen.ClusterGenerator{{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}},
		Present: []client.Object{
			present(&genv1.UUID{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "taken"}, Spec: genv1.UUIDSpec{SecretKey: "id"}},
				genv1.GroupVersion.WithKind("UUID")),
			// A provider's Fake configuration of the same name is another kind.
			present(&provv2.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "fixed"}}, provv2.GroupVersion.WithKind("Fake")),
			// A copy an earlier run made, before the upstream object changed.
			present(&genv1.UUID{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "copied-before",
				Annotations: map[string]string{MigratedFrom: upgen.GroupVersion.String()}}, Spec: genv1.UUIDSpec{SecretKey: "old"}},
				genv1.GroupVersion.WithKind("UUID")),
		},
	}
	p := Build(objs, Options{})
	if len(p.Generators) != 4 {
		t.Fatalf("moves %d generators, want the Password, the MFA, the Fake and the UUID copied before: %+v", len(p.Generators), p.Generators)
	}
	if fake := p.Generators[2].To; len(fake.GetFinalizers()) != 0 {
		t.Errorf("the Fake's copy carries the upstream object's finalizers %v", fake.GetFinalizers())
	}
	pw := p.Generators[0].To.(*genv1.Password)
	if pw.Namespace != "team" || pw.Name != "db" || pw.Spec.Length != 16 || pw.UID != "" || pw.ResourceVersion != "" ||
		pw.Annotations[MigratedFrom] != upgen.GroupVersion.String() || pw.GroupVersionKind() != genv1.GroupVersion.WithKind("Password") {
		t.Errorf("the Password becomes %+v", pw)
	}
	if mfa := p.Generators[1].To.(*genv1.MFA); mfa.Spec.Algorithm != "" {
		t.Errorf("the MFA keeps algorithm %q: eso's kind would honour what upstream ignores", mfa.Spec.Algorithm)
	}
	if len(p.Refused) != 1 || !strings.Contains(p.Refused[0], "team/taken") || !strings.Contains(p.Refused[0], "exists with another spec") {
		t.Errorf("refused %v, want the UUID whose eso kind differs", p.Refused)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "ClusterGenerator") {
		t.Errorf("notes %v, want the ClusterGenerator's", p.Notes)
	}
	if back := Build(objs, Options{Direction: ToV1}); len(back.Generators) != 0 || len(back.Restore) != 0 {
		t.Errorf("a rollback with the upstream objects there moves %d generators, restores %d", len(back.Generators), len(back.Restore))
	}
	// After the move: a rollback creates the upstream objects again from
	// the copies (their spec as served), and nothing else.
	after := Objects{}
	for _, m := range p.Generators {
		after.Present = append(after.Present, m.To)
	}
	after.Present = append(after.Present, objs.Present[0]) // not a copy
	back := Build(after, Options{Direction: ToV1})
	if len(back.Restore) != 4 {
		t.Fatalf("restores %d, want the 4 moved", len(back.Restore))
	}
	if r := back.Restore[0]; describe(r) != "Password.generators.external-secrets.io/v1alpha1 team/db" {
		t.Errorf("restores %s first, want upstream's Password team/db", describe(r))
	}
}

func present(obj client.Object, gvk schema.GroupVersionKind) client.Object {
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj
}
