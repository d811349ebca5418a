package providers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrCredentialsNotFound: a credentials Secret, or the key in it, does not
// exist (yet). It is an invalid configuration, but one that fixes itself
// when the Secret is created: the error names the Secret (Awaiting), core
// watches for it while the store waits, and checks again soon besides.
var ErrCredentialsNotFound = fmt.Errorf("%w", ErrInvalidConfig)

// CredentialValue reads key of the Secret name in namespace, the credentials
// namespace of the request (Scope.Namespace): providers never take a
// namespace from their configuration. Errors name the Secret and key, never
// the content.
func CredentialValue(ctx context.Context, r client.Reader, namespace, name, key string) ([]byte, error) {
	var s corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, Awaiting(ObjectRef{Kind: "Secret", Namespace: namespace, Name: name},
				fmt.Errorf("%w: credentials Secret %s/%s not found", ErrCredentialsNotFound, namespace, name))
		}
		return nil, fmt.Errorf("reading credentials Secret %s/%s: %w", namespace, name, err)
	}
	v, ok := s.Data[key]
	if !ok || len(v) == 0 {
		return nil, Awaiting(ObjectRef{Kind: "Secret", Namespace: namespace, Name: name, ResourceVersion: s.ResourceVersion},
			fmt.Errorf("%w: credentials Secret %s/%s has no key %q", ErrCredentialsNotFound, namespace, name, key))
	}
	return v, nil
}
