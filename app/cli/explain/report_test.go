package explain

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv2 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/outcomes"
)

// TestRender: the chain reads top down, indented by depth, with a mark per
// state; only failing links give a hint, each under "What to change".
func TestRender(t *testing.T) {
	r := &Report{Title: "ExternalSecret demo/app (external-secrets.io/v1)"}
	r.add(Link{What: "ExternalSecret demo/app", State: Failing, Status: "Ready=False SecretSyncedError",
		Details: []string{"Synced=False StoreNotReady: store is not ready"}, Hint: "fix the store"})
	r.add(Link{Depth: 1, What: "SecretStore demo/vault (secretstore.external-secrets.io/v2alpha1)", State: Failing,
		Status: "Ready=False AuthenticationFailed: permission denied", Hint: "rotate the token"})
	r.add(Link{Depth: 2, What: "Vault demo/vault", State: OK, Status: "exists (generation 1)", Hint: "never shown"})
	r.add(Link{Depth: 3, What: "Secret demo/vault-token", State: Unknown, Status: "cannot read it"})
	r.LastDid = []string{"last wrote the target Secret: never"}
	r.Next = []string{"every 1h"}
	var b strings.Builder
	if err := r.Render(&b); err != nil {
		t.Fatal(err)
	}
	want := `ExternalSecret demo/app (external-secrets.io/v1)

Chain:
  [FAIL] ExternalSecret demo/app
         Ready=False SecretSyncedError
         Synced=False StoreNotReady: store is not ready
     -> [FAIL] SecretStore demo/vault (secretstore.external-secrets.io/v2alpha1)
               Ready=False AuthenticationFailed: permission denied
        -> [ok]   Vault demo/vault
                  exists (generation 1)
           -> [?]    Secret demo/vault-token
                     cannot read it

What eso last did:
  last wrote the target Secret: never

When eso acts next:
  every 1h

What to change:
  - ExternalSecret demo/app: fix the store
  - SecretStore demo/vault (secretstore.external-secrets.io/v2alpha1): rotate the token
`
	if got := b.String(); got != want {
		t.Errorf("Render:\n%s\nwant:\n%s", got, want)
	}
	if !r.Failing() {
		t.Error("Failing() = false with failing links")
	}
}

// TestRenderAllReady says there is nothing to change.
func TestRenderAllReady(t *testing.T) {
	r := &Report{Title: "SecretStore demo/fake"}
	r.add(Link{What: "SecretStore demo/fake", State: OK})
	var b strings.Builder
	_ = r.Render(&b)
	if !strings.Contains(b.String(), "What to change:\n  nothing: every link is ready\n") || r.Failing() {
		t.Errorf("all ready:\n%s", b.String())
	}
}

// TestConditionLine names the condition, its reason and message, and says
// when it describes an older generation.
func TestConditionLine(t *testing.T) {
	conds := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "StoreNotFound", Message: "gone", ObservedGeneration: 2}}
	for _, tc := range []struct {
		typ        string
		generation int64
		want       string
	}{
		{"Ready", 2, "Ready=False StoreNotFound: gone"},
		{"Ready", 3, "Ready=False StoreNotFound: gone (about generation 2; the object is at 3, not looked at yet)"},
		{"Synced", 2, "Synced: not set yet (eso has not acted on it)"},
	} {
		if got := conditionLine(conds, tc.typ, tc.generation); got != tc.want {
			t.Errorf("conditionLine(%s, %d) = %q, want %q", tc.typ, tc.generation, got, tc.want)
		}
	}
	if conditionState(conds, "Ready") != Failing || conditionState(conds, "Synced") != Unknown {
		t.Error("conditionState: want Failing for False, Unknown for absent")
	}
}

// TestEveryReasonHasAHint: every Ready reason the outcomes table gives a
// store or an ExternalSecret, and every store reason the API names, has an
// entry here, so a failing link always says what to change.
func TestEveryReasonHasAHint(t *testing.T) {
	storeReasons, esReasons := outcomes.Reasons()
	storeReasons = append(storeReasons, ssv2.ReasonValid, ssv2.ReasonInvalidConditions, ssv2.ReasonInvalidSpec)
	for _, r := range storeReasons {
		if _, ok := storeHints[r]; !ok {
			t.Errorf("store reason %s has no hint", r)
		}
	}
	for _, r := range append(esReasons, esv1.ReasonTargetConflict, esv1.ReasonTargetImmutable, esv1.ReasonSecretMissing) {
		if _, ok := externalSecretHints[r]; !ok {
			t.Errorf("ExternalSecret reason %s has no hint", r)
		}
	}
	if len(storeReasons) < 8 || len(esReasons) < 8 {
		t.Errorf("outcomes.Reasons() = %v, %v: too few", storeReasons, esReasons)
	}
}

// TestSecretRefs finds every credentials Secret a configuration names, by
// type, with the field's path; a CA held in a ConfigMap is no Secret.
func TestSecretRefs(t *testing.T) {
	vault := &provv2.Vault{Spec: provv2.VaultSpec{
		Server:     "https://vault:8200",
		CAProvider: &provv2.CAProvider{Type: provv2.CAProviderConfigMap, Name: "ca", Key: "ca.crt"},
		Auth:       provv2.VaultAuth{TokenSecretRef: &provv2.SecretKeySelector{Name: "vault-token", Key: "token"}},
	}}
	got := secretRefs(vault)
	want := []secretRef{{Field: "spec.auth.tokenSecretRef", Name: "vault-token", Key: "token"}}
	if !slices.Equal(got, want) {
		t.Errorf("secretRefs(vault) = %+v, want %+v", got, want)
	}
	vault.Spec.CAProvider.Type = provv2.CAProviderSecret
	if got := secretRefs(vault); len(got) != 2 || got[0].Field != "spec.caProvider" {
		t.Errorf("secretRefs with a CA Secret = %+v", got)
	}
	aws := &provv2.AWSSecretManager{}
	aws.Spec.Auth = &provv2.AWSAuth{SecretRef: &provv2.AWSAuthSecretRef{
		AccessKeyID:     provv2.SecretKeySelector{Name: "aws", Key: "id"},
		SecretAccessKey: provv2.SecretKeySelector{Name: "aws", Key: "secret"}}}
	if got := secretRefs(aws); len(got) != 2 || got[1].Field != "spec.auth.secretRef.secretAccessKeySecretRef" {
		t.Errorf("secretRefs(aws) = %+v", got)
	}
	if got := secretRefs(&provv2.Fake{Spec: provv2.FakeSpec{Data: []provv2.FakeSecret{{Key: "k", Value: "v"}}}}); len(got) != 0 {
		t.Errorf("secretRefs(fake) = %+v, want none", got)
	}
}

// TestParseInterspersed takes flags after the positional arguments too, as
// kubectl users write them.
func TestParseInterspersed(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var conn connFlags
	conn.register(fs)
	pos, err := parseInterspersed(fs, []string{"es/app", "-n", "demo", "--context", "kind"})
	if err != nil || !slices.Equal(pos, []string{"es/app"}) || conn.namespace != "demo" || conn.context != "kind" {
		t.Errorf("parse = %v, %v, %+v", pos, err, conn)
	}
	for _, tc := range []struct {
		args                   []string
		kind, apiVersion, name string
		ok                     bool
	}{
		{[]string{"ES/app"}, "es", "", "app", true},
		{[]string{"secretstore", "fake"}, "secretstore", "", "fake", true},
		{[]string{"ss.v1.external-secrets.io/fake"}, "ss", "external-secrets.io/v1", "fake", true},
		{[]string{"SecretStore.v2alpha1.secretstore.external-secrets.io/fake"}, "secretstore", "secretstore.external-secrets.io/v2alpha1", "fake", true},
		{[]string{"ss.v1/fake"}, "", "", "", false},
		{[]string{"es/"}, "", "", "", false},
		{[]string{"app"}, "", "", "", false},
	} {
		kind, apiVersion, name, ok := splitKindName(tc.args)
		if ok != tc.ok || (ok && (kind != tc.kind || apiVersion != tc.apiVersion || name != tc.name)) {
			t.Errorf("splitKindName(%v) = %q %q %q %v", tc.args, kind, apiVersion, name, ok)
		}
	}
}

// TestExternalSecretNext says when eso acts next from the refresh
// settings, and while failing how the failure is retried.
func TestExternalSecretNext(t *testing.T) {
	es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "app"}}
	es.Spec.RefreshInterval = &metav1.Duration{Duration: time.Minute}
	if got := strings.Join(externalSecretNext(es, esv1.ReasonStoreNotReady), "\n"); !strings.Contains(got, "every 1m0s") ||
		!strings.Contains(got, "at once when the store or its provider configuration changes") {
		t.Errorf("periodic, store not ready:\n%s", got)
	}
	es.Spec.RefreshPolicy = esv1.RefreshPolicyCreatedOnce
	if got := strings.Join(externalSecretNext(es, ""), "\n"); !strings.Contains(got, "CreatedOnce") || strings.Contains(got, "every 1m0s") {
		t.Errorf("created once:\n%s", got)
	}
}
