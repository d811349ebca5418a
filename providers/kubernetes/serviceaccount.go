package kubernetes

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

const (
	// tokenLifetime is what eso asks for; the API server may grant less.
	tokenLifetime = time.Hour
	// tokenRenewBefore renews a token this long before it expires.
	tokenRenewBefore = 5 * time.Minute
)

// serviceAccountReader reads Secrets as a ServiceAccount, with a token from the
// TokenRequest API that it renews shortly before expiry (not on every read).
type serviceAccountReader struct {
	deps      plugin.Deps
	namespace string
	name      string
	audiences []string

	mu      sync.Mutex
	client  corev1client.CoreV1Interface
	expires time.Time
}

func newServiceAccountReader(deps plugin.Deps, namespace, name string, audiences []string) *serviceAccountReader {
	return &serviceAccountReader{deps: deps, namespace: namespace, name: name, audiences: audiences}
}

func (r *serviceAccountReader) getSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	c, err := r.clientset(ctx)
	if err != nil {
		return nil, err
	}
	return c.Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (r *serviceAccountReader) listSecrets(ctx context.Context, namespace string, selector labels.Selector, continueToken string) ([]corev1.Secret, string, error) {
	c, err := r.clientset(ctx)
	if err != nil {
		return nil, "", err
	}
	list, err := c.Secrets(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String(), Limit: listPageSize, Continue: continueToken})
	if err != nil {
		return nil, "", err
	}
	return list.Items, list.Continue, nil
}

func (r *serviceAccountReader) clientset(ctx context.Context) (corev1client.CoreV1Interface, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil && time.Until(r.expires) > tokenRenewBefore {
		return r.client, nil
	}
	token, expires, err := kit.ServiceAccountToken(ctx, r.deps.Client, r.namespace, r.name, r.audiences, tokenLifetime)
	if err != nil {
		return nil, err
	}
	cfg := rest.AnonymousClientConfig(r.deps.RESTConfig)
	cfg.BearerToken = token
	c, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for ServiceAccount %s/%s: %w", r.namespace, r.name, err)
	}
	r.client, r.expires = c, expires
	return c, nil
}
