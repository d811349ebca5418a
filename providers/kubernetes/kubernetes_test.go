package kubernetes

import (
	"errors"
	"testing"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// TestRemoteNamespaceScope: eso's own identity reads only the credentials
// namespace; a ServiceAccount reads wherever its RBAC allows.
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
