package kit

import (
	"context"
	"fmt"
	"time"

	"github.com/eso-dev/eso/providers/plugin"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ServiceAccountToken requests a short-lived token for ServiceAccount name
// of namespace (TokenRequest), with the given audiences and lifetime. It
// returns the token and when it expires.
func ServiceAccountToken(ctx context.Context, c client.Client, namespace, name string, audiences []string, lifetime time.Duration) (string, time.Time, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	tr := &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{
		Audiences:         audiences,
		ExpirationSeconds: ptr.To(int64(lifetime.Seconds())),
	}}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		if apierrors.IsNotFound(err) {
			// A configuration naming a ServiceAccount that is not there.
			return "", time.Time{}, fmt.Errorf("%w: ServiceAccount %s/%s not found", plugin.ErrInvalidConfig, namespace, name)
		}
		return "", time.Time{}, fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, tr.Status.ExpirationTimestamp.Time, nil
}
