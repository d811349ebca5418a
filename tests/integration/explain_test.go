package integration

import (
	"fmt"
	"io"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/cli/binary"
	"github.com/eso-dev/eso/app/cli/explain"
	"github.com/eso-dev/eso/app/wiring"
)

// cli runs one of eso's commands and returns its exit code and output.
func cli(cmd func([]string, io.Writer, io.Writer) int, args ...string) (int, string, string) {
	var out, errOut strings.Builder
	code := cmd(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// build is this binary's plugins and v1 layer, as main passes them.
var build = binary.Build{Plugins: wiring.Plugins(), V1Layer: wiring.V1Layer()}

func explainCmd(args []string, stdout, stderr io.Writer) int {
	return explain.Explain(build, args, stdout, stderr)
}

func checkCmd(args []string, stdout, stderr io.Writer) int {
	return explain.Check(build, args, stdout, stderr)
}

// wantLines fails unless out contains every line.
func wantLines(t *testing.T, what, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(out, l) {
			t.Errorf("%s does not say %q; it printed:\n%s", what, l, out)
		}
	}
}

// TestExplain: `eso explain` with a kubeconfig for the cluster names the
// failing link of an ExternalSecret's chain (a store that is not there, a
// store that is not Ready for want of its credentials Secret) with what to
// change, says how a storeRef without apiVersion resolved, and shows a
// synced ExternalSecret's Secret by its key names only.
func TestExplain(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "explain", nil)
	kubeconfig := writeKubeconfig(t, t.TempDir(), env.Config)

	const value = "correct-horse-battery-staple"
	create(t, fakeConfig(ns, "fake", map[string]string{"db": value}), secretStore(ns, "fake", storeSpec("Fake", "fake", "")))
	vault := &provv1.Vault{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault"}, Spec: provv1.VaultSpec{
		Server: "https://vault.invalid:8200", Path: "secret",
		Auth: provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault-token", Key: "token"}}}}
	gatedStore := secretStore(ns, "vault", storeSpec("Vault", "vault", ""))
	create(t, vault, gatedStore)

	synced := externalSecret(ns, "synced", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "")})
	orphan := externalSecret(ns, "orphan", "SecretStore", "nowhere", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("db", "")})
	gated := externalSecret(ns, "gated", "SecretStore", "vault", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("db", "")})
	create(t, synced, orphan, gated)
	waitReady(t, synced, metav1.ConditionTrue, esv1.ReasonSecretSynced)
	waitReady(t, orphan, metav1.ConditionFalse, esv1.ReasonStoreNotFound)
	storeReason := waitReadyStatus(t, gatedStore, metav1.ConditionFalse)
	waitReady(t, gated, metav1.ConditionFalse, esv1.ReasonStoreNotReady)

	code, out, errOut := cli(explainCmd, "es/orphan", "-n", ns, "--kubeconfig", kubeconfig)
	if code != 1 {
		t.Errorf("explain es/orphan exit %d, want 1; stderr: %s", code, errOut)
	}
	wantLines(t, "explain es/orphan", out,
		"[FAIL] ExternalSecret "+ns+"/orphan",
		"Synced=False StoreNotFound",
		"[FAIL] SecretStore "+ns+"/nowhere (no apiVersion)",
		"spec.secretStoreRef has no apiVersion: the external-secrets.io/v1 store of the name is used when one exists",
		"- SecretStore "+ns+"/nowhere (no apiVersion): create the store, or point the storeRef",
		"refreshPolicy Periodic: eso reads the provider again every 1h0m0s")

	// KUBECONFIG is honoured as kubectl honours it.
	t.Setenv("KUBECONFIG", kubeconfig)
	code, out, errOut = cli(explainCmd, "externalsecret", "gated", "--namespace", ns)
	if code != 1 {
		t.Errorf("explain externalsecret gated exit %d, want 1; stderr: %s", code, errOut)
	}
	wantLines(t, "explain es/gated", out,
		"Synced=False StoreNotReady",
		"[FAIL] SecretStore "+ns+"/vault (secretstore.external-secrets.io/v2alpha1)",
		"Ready=False "+storeReason,
		"it resolves to the secretstore.external-secrets.io/v2alpha1 store",
		"[ok]   Vault "+ns+"/vault",
		"[FAIL] Secret "+ns+"/vault-token",
		"named by spec.auth.tokenSecretRef",
		fmt.Sprintf("- Secret %s/vault-token: create Secret %s/vault-token with key \"token\"", ns, ns),
		"while it fails: at once when the store or its provider configuration changes")

	code, out, errOut = cli(explainCmd, "es/synced", "-n", ns)
	if code != 0 {
		t.Errorf("explain es/synced exit %d, want 0; stderr: %s\n%s", code, errOut, out)
	}
	wantLines(t, "explain es/synced", out,
		"[ok]   ExternalSecret "+ns+"/synced",
		"[ok]   SecretStore "+ns+"/fake (secretstore.external-secrets.io/v2alpha1)",
		"[ok]   Fake "+ns+"/fake",
		"[ok]   target Secret "+ns+"/synced",
		"exists, keys: password",
		"labelled reconcile.external-secrets.io/managed=true",
		"synced the current generation (1)",
		"nothing: every link is ready")
	if strings.Contains(out, value) {
		t.Errorf("explain printed a secret value:\n%s", out)
	}

	// A user who may read the eso objects but no Secret learns what it
	// may not read, not a wrong verdict.
	viewer := writeKubeconfig(t, t.TempDir(), explainViewer(t, ns))
	code, out, errOut = cli(explainCmd, "es/gated", "-n", ns, "--kubeconfig", viewer)
	if code != 1 {
		t.Errorf("explain es/gated as a viewer: exit %d, want 1; stderr: %s\n%s", code, errOut, out)
	}
	wantLines(t, "explain es/gated as a viewer", out,
		"[FAIL] SecretStore "+ns+"/vault (secretstore.external-secrets.io/v2alpha1)",
		"[?]    Secret "+ns+"/vault-token",
		"cannot read it with your kubeconfig: Forbidden",
		"[?]    target Secret "+ns+"/gated")

	code, out, _ = cli(explainCmd, "ss/vault", "-n", ns)
	if code != 1 {
		t.Errorf("explain ss/vault exit %d, want 1", code)
	}
	wantLines(t, "explain ss/vault", out, "[FAIL] Secret "+ns+"/vault-token", "now, from here: eso check store vault -n "+ns)

	if code, _, errOut := cli(explainCmd, "es/absent", "-n", ns); code != 1 || !strings.Contains(errOut, "ExternalSecret "+ns+"/absent not found") {
		t.Errorf("explain es/absent: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := cli(explainCmd, "deployment/x"); code != 2 {
		t.Errorf("explain deployment/x exit %d, want 2 (usage)", code)
	}
}

// explainViewer is a user who may read ExternalSecrets, stores and Vault
// configurations in ns, and no Secret.
func explainViewer(t *testing.T, ns string) *rest.Config {
	t.Helper()
	const user = "explain-viewer"
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{esv1.GroupVersion.Group}, Resources: []string{"externalsecrets", "secretstores"}, Verbs: []string{"get"}},
		{APIGroups: []string{ssv2.GroupVersion.Group}, Resources: []string{"secretstores"}, Verbs: []string{"get"}},
		{APIGroups: []string{provv1.GroupVersion.Group}, Resources: []string{"vaults"}, Verbs: []string{"get"}},
	}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	create(t, role, binding)
	return env.UserConfig(t, user)
}

// TestCheckStore: `eso check store` validates a store once with the
// controller's steps: a valid Fake store exits 0, a broken one exits
// non-zero with the reason the controller gives it.
func TestCheckStore(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "check", nil)
	kubeconfig := writeKubeconfig(t, t.TempDir(), env.Config)

	valid := secretStore(ns, "valid", storeSpec("Fake", "fake", ""))
	missing := secretStore(ns, "missing", storeSpec("Fake", "absent", ""))
	dup := &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dup"}, Spec: provv1.FakeSpec{Data: []provv1.FakeSecret{
		{Key: "k", Value: "first-value"}, {Key: "k", Value: "second-value"}}}}
	invalid := secretStore(ns, "invalid", storeSpec("Fake", "dup", ""))
	create(t, fakeConfig(ns, "fake", map[string]string{"k": "v"}), dup, valid, missing, invalid)

	code, out, errOut := cli(checkCmd, "store", "valid", "-n", ns, "--kubeconfig", kubeconfig)
	if code != 0 {
		t.Errorf("check store valid exit %d, want 0; stderr: %s\n%s", code, errOut, out)
	}
	wantLines(t, "check store valid", out, "SecretStore "+ns+"/valid (secretstore.external-secrets.io/v2alpha1)",
		"verdict: Valid", "reason:  Valid", "message: provider configuration Fake "+ns+"/fake is valid")

	for _, s := range []*ssv2.SecretStore{missing, invalid} {
		reason := waitReadyStatus(t, s, metav1.ConditionFalse)
		code, out, errOut := cli(checkCmd, "store/"+s.Name, "--kubeconfig", kubeconfig, "-n", ns)
		if code != 1 {
			t.Errorf("check store %s exit %d, want 1; stderr: %s\n%s", s.Name, code, errOut, out)
		}
		wantLines(t, "check store "+s.Name, out, "verdict: not valid", "reason:  "+reason, "change:  ")
		if strings.Contains(out, "first-value") || strings.Contains(out, "second-value") {
			t.Errorf("check printed a secret value:\n%s", out)
		}
	}
	if code, _, errOut := cli(checkCmd, "store", "absent", "-n", ns, "--kubeconfig", kubeconfig); code != 1 || !strings.Contains(errOut, "store not found") {
		t.Errorf("check store absent: exit %d, stderr %q", code, errOut)
	}
}

// TestExplainResolvesAsEso: a storeRef without apiVersion is explained as
// eso resolves it — to upstream's v1 store of the name, with the v2alpha1
// store of the same name named as not used — and a PushSecret's chain names
// its missing source Secret and its store.
func TestExplainResolvesAsEso(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "explain-v1", nil)
	kubeconfig := writeKubeconfig(t, t.TempDir(), env.Config)
	create(t, fakeConfig(ns, "shared", map[string]string{"k": "v2-value"}), secretStore(ns, "shared", storeSpec("Fake", "shared", "")))
	applyYAML(t, ns, `
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: shared}
spec:
  provider:
    fake: {data: [{key: k, value: v1-value}]}
`)
	es := externalSecret(ns, "app", "SecretStore", "shared", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	create(t, es)
	waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)

	code, out, errOut := cli(explainCmd, "es/app", "-n", ns, "--kubeconfig", kubeconfig)
	if code != 0 {
		t.Errorf("explain es/app exit %d, want 0; stderr: %s\n%s", code, errOut, out)
	}
	wantLines(t, "explain es/app", out,
		"SecretStore "+ns+"/shared (external-secrets.io/v1)",
		"it resolves to the external-secrets.io/v1 store (a secretstore.external-secrets.io/v2alpha1 store of the same name exists and is NOT used)",
		"Fake (inline in the v1 store's spec.provider)")
	code, out, _ = cli(explainCmd, "ss/shared", "--api-version", "secretstore.external-secrets.io/v2alpha1", "-n", ns, "--kubeconfig", kubeconfig)
	if code != 0 {
		t.Errorf("explain ss/shared --api-version v2alpha1 exit %d\n%s", code, out)
	}
	wantLines(t, "explain ss/shared", out, "SecretStore "+ns+"/shared (secretstore.external-secrets.io/v2alpha1)", "names it with apiVersion")
	code, out, _ = cli(explainCmd, "secretstore.v1.external-secrets.io/shared", "-n", ns, "--kubeconfig", kubeconfig)
	if code != 0 {
		t.Errorf("explain secretstore.v1.external-secrets.io/shared exit %d\n%s", code, out)
	}
	wantLines(t, "explain secretstore.v1.external-secrets.io/shared", out,
		"SecretStore "+ns+"/shared (external-secrets.io/v1)", "the name given names it with apiVersion external-secrets.io/v1")
	for _, v := range []string{"v1-value", "v2-value"} {
		if strings.Contains(out, v) {
			t.Errorf("explain printed a secret value:\n%s", out)
		}
	}

	ps := pushSecret(ns, "push", "missing-source", []string{"shared"}, pushed("k", "remote", ""))
	create(t, ps)
	code, out, _ = cli(explainCmd, "ps/push", "-n", ns, "--kubeconfig", kubeconfig)
	if code != 1 {
		t.Errorf("explain ps/push exit %d, want 1\n%s", code, out)
	}
	wantLines(t, "explain ps/push", out,
		"[FAIL] source Secret "+ns+"/missing-source",
		"- source Secret "+ns+"/missing-source: the source Secret is gone: create it again",
		"SecretStore "+ns+"/shared (external-secrets.io/v1)")
}
