package externalsecret

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
)

// TestFindNullBytePolicy: a find's nullBytePolicy works as a remoteRef's, on
// the decoded values, as upstream's handleFindAllSecrets: Fail refuses the
// entry naming the key (never the value), Ignore or none keeps the bytes.
func TestFindNullBytePolicy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy esv1.NullBytePolicy
		fails  bool
	}{{"absent", "", false}, {"Ignore", esv1.NullBytePolicyIgnore, false}, {"Fail", esv1.NullBytePolicyFail, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ns := env.Namespace(t, "find-nul", nil)
			h := newHarness(t)
			cfg := fakeConfig(ns,
				provv1.FakeSecret{Key: "bin/a", Value: "YQBi"}, // base64 of "a\x00b"
				provv1.FakeSecret{Key: "bin/b", Value: "dGV4dA=="})
			es := externalSecret(ns)
			es.Spec.Data = nil
			es.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{{Find: &esv1.ExternalSecretFind{
				Name: &esv1.FindName{RegExp: "^bin/"}, DecodingStrategy: esv1.DecodingBase64, NullBytePolicy: tc.policy}}}
			create(t, cfg, secretStore(ns), es)
			h.reconcile(t, es)

			got := getES(t, es)
			ready := readyCondition(got)
			if !tc.fails {
				if ready == nil || ready.Status != metav1.ConditionTrue {
					t.Fatalf("Ready = %+v", ready)
				}
				s := getSecret(t, ns, "app")
				if string(s.Data["bin_a"]) != "a\x00b" || string(s.Data["bin_b"]) != "text" {
					t.Fatalf("Secret data = %q", s.Data)
				}
				return
			}
			if ready == nil || ready.Status != metav1.ConditionFalse {
				t.Fatalf("Ready = %+v", ready)
			}
			if !strings.Contains(ready.Message, `"bin_a"`) || !strings.Contains(ready.Message, "NUL byte") || strings.Contains(ready.Message, "text") {
				t.Errorf("message %q should name the key bin_a and the NUL byte, and hold no value", ready.Message)
			}
		})
	}
}
