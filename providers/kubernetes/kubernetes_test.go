package kubernetes

import (
	"errors"
	"strings"
	"testing"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// TestRemoteNamespaceScope: eso's own identity reads only the credentials
// namespace; a configured identity reads wherever its RBAC allows.
func TestRemoteNamespaceScope(t *testing.T) {
	sa := &provv1.KubernetesAuth{ServiceAccount: &provv1.KubernetesServiceAccount{Name: "reader"}}
	cases := []struct {
		name   string
		spec   provv1.KubernetesSpec
		scope  plugin.Scope
		want   string
		refuse bool
	}{
		{"default is the credentials namespace", provv1.KubernetesSpec{}, plugin.Scope{Namespace: "team"}, "team", false},
		{"own namespace named explicitly", provv1.KubernetesSpec{RemoteNamespace: "team"}, plugin.Scope{Namespace: "team"}, "team", false},
		{"own identity, other namespace", provv1.KubernetesSpec{RemoteNamespace: "kube-system"}, plugin.Scope{Namespace: "team"}, "", true},
		{"service account, other namespace", provv1.KubernetesSpec{RemoteNamespace: "shared", Auth: sa}, plugin.Scope{Namespace: "team"}, "shared", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := remoteNamespace(&provv1.Kubernetes{Spec: tc.spec}, tc.scope)
			if tc.refuse != errors.Is(err, plugin.ErrOutOfScope) || got != tc.want {
				t.Errorf("remoteNamespace = %q, %v; want %q (refused: %v)", got, err, tc.want, tc.refuse)
			}
		})
	}
}

// TestCheckSpec: what the schema refuses is refused again for
// configurations that did not pass through it (v1 stores, a provider
// process's requests); above all, eso's own identity never goes to another
// server.
func TestCheckSpec(t *testing.T) {
	token := tokenAuth()
	remote := func(url string) *provv1.KubernetesServer { return &provv1.KubernetesServer{URL: url} }
	cases := []struct {
		name string
		spec provv1.KubernetesSpec
		says string // "" when accepted
	}{
		{"this cluster as eso", provv1.KubernetesSpec{}, ""},
		{"another cluster with a token", provv1.KubernetesSpec{Server: remote("https://hub:6443"), Auth: token}, ""},
		{"another cluster as eso", provv1.KubernetesSpec{Server: remote("https://hub:6443")}, "server.url needs auth"},
		{"another cluster over http", provv1.KubernetesSpec{Server: remote("http://hub:6443"), Auth: token}, "https://"},
		{"a URL carrying user information", provv1.KubernetesSpec{Server: remote("https://user:pw@hub:6443"), Auth: token}, "https://"},
		{"a CA for this cluster", provv1.KubernetesSpec{Server: &provv1.KubernetesServer{CABundle: []byte("x")}, Auth: token}, "need server.url"},
		{"two identities", provv1.KubernetesSpec{Auth: &provv1.KubernetesAuth{Token: token.Token,
			ServiceAccount: &provv1.KubernetesServiceAccount{Name: "sa"}}}, "exactly one"},
		{"no identity in auth", provv1.KubernetesSpec{Auth: &provv1.KubernetesAuth{}}, "exactly one"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkSpec(&tc.spec)
			if tc.says == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, plugin.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("checkSpec = %v, want ErrInvalidConfig saying %q", err, tc.says)
			}
		})
	}
}
