package kit

import (
	"context"
	"fmt"

	"github.com/eso-dev/eso/providers/plugin"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CredentialValue reads key of the Secret name in namespace, the credentials
// namespace of the request (Scope.Namespace): providers never take a
// namespace from their configuration. Errors name the Secret and key, never
// the content.
func CredentialValue(ctx context.Context, r client.Reader, namespace, name, key string) ([]byte, error) {
	var s corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, plugin.Awaiting(plugin.ObjectRef{Kind: "Secret", Namespace: namespace, Name: name},
				fmt.Errorf("%w: credentials Secret %s/%s not found", plugin.ErrCredentialsNotFound, namespace, name))
		}
		return nil, fmt.Errorf("reading credentials Secret %s/%s: %w", namespace, name, err)
	}
	v, ok := s.Data[key]
	if !ok || len(v) == 0 {
		return nil, plugin.Awaiting(plugin.ObjectRef{Kind: "Secret", Namespace: namespace, Name: name, ResourceVersion: s.ResourceVersion},
			fmt.Errorf("%w: credentials Secret %s/%s has no key %q", plugin.ErrCredentialsNotFound, namespace, name, key))
	}
	return v, nil
}
