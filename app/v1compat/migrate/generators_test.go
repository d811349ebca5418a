package migrate

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
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
		},
		ClusterGenerators: []upgen.ClusterGenerator{{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}},
		Present: []client.Object{func() client.Object {
			o := &genv1.UUID{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "taken"}, Spec: genv1.UUIDSpec{SecretKey: "id"}}
			o.SetGroupVersionKind(genv1.GroupVersion.WithKind("UUID"))
			return o
		}()},
	}
	p := Build(objs, Options{})
	if len(p.Generators) != 2 {
		t.Fatalf("moves %d generators, want the Password and the MFA: %+v", len(p.Generators), p.Generators)
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
	if back := Build(objs, Options{Direction: ToV1}); len(back.Generators) != 0 {
		t.Errorf("a rollback moves %d generators", len(back.Generators))
	}
}
