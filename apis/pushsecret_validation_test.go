package apis_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/eso-dev/eso/tests/testenv"
)

// TestUpstreamPushSecretsApply: PushSecrets and ClusterPushSecrets written
// as upstream documents them apply unchanged, and get upstream's defaults.
func TestUpstreamPushSecretsApply(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "apis", "testdata", "upstream-pushsecrets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t, "upstream-push", nil)
	applied := 0
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		obj, err := apply(t, ns, doc)
		if obj.GetKind() == "ClusterPushSecret" {
			obj.SetNamespace("")
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
		}
		if err != nil {
			t.Errorf("%s %s rejected: %v", obj.GetKind(), obj.GetName(), err)
			continue
		}
		applied++
		spec := []string{"spec"}
		if obj.GetKind() == "ClusterPushSecret" {
			spec = []string{"spec", "pushSecretSpec"}
		}
		for field, want := range map[string]string{
			"updatePolicy": "Replace", "deletionPolicy": "", "refreshInterval": "", "adoptionPolicy": "Never",
		} {
			got, _, _ := unstructured.NestedString(obj.Object, append(spec, field)...)
			if want != "" && got != want {
				t.Errorf("%s %s: %s = %q, want %q", obj.GetKind(), obj.GetName(), field, got, want)
			}
			if got == "" {
				t.Errorf("%s %s: %s has no default", obj.GetKind(), obj.GetName(), field)
			}
		}
	}
	if applied < 15 {
		t.Errorf("applied %d manifests, want all 15", applied)
	}
}
