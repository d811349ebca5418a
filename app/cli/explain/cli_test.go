package explain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eso-dev/eso/app/cli/binary"
)

// twoContexts is a kubeconfig with two contexts of their own namespaces;
// no server is contacted by connect.
const twoContexts = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://a.invalid:6443"}
- name: b
  cluster: {server: "https://b.invalid:6443"}
users:
- name: u
  user: {token: t}
contexts:
- name: a
  context: {cluster: a, user: u, namespace: team-a}
- name: b
  context: {cluster: b, user: u, namespace: team-b}
current-context: a
`

// TestConnectFollowsKubeconfig: the namespace is -n, else the chosen
// context's (--context, else the current one), as kubectl does; an unknown
// context is an error.
// testBuild has no plugins and no v1 layer: enough to connect.
var testBuild = binary.Build{}

func TestConnectFollowsKubeconfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(twoContexts), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags connFlags
		want  string
	}{
		{connFlags{kubeconfig: path}, "team-a"},
		{connFlags{kubeconfig: path, context: "b"}, "team-b"},
		{connFlags{kubeconfig: path, context: "b", namespace: "mine"}, "mine"},
	} {
		s, err := connect(testBuild, tc.flags, false)
		if err != nil {
			t.Fatalf("connect(%+v): %v", tc.flags, err)
		}
		if s.namespace != tc.want {
			t.Errorf("connect(%+v) namespace = %q, want %q", tc.flags, s.namespace, tc.want)
		}
	}
	t.Setenv("KUBECONFIG", path)
	if s, err := connect(testBuild, connFlags{context: "b"}, false); err != nil || s.namespace != "team-b" {
		t.Errorf("connect with $KUBECONFIG: %v, %+v", err, s)
	}
	if _, err := connect(testBuild, connFlags{kubeconfig: path, context: "nope"}, false); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("connect with an unknown context: %v", err)
	}
}
