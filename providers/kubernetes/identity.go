package kubernetes

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ownIdentity reads and writes as eso itself, in its own cluster: the
// reader goes straight to the API server (eso caches no Secret data), the
// writer is the manager's client. remoteNamespace keeps it to the
// credentials namespace.
type ownIdentity struct {
	reader client.Reader
	writer client.Client
}

func (o ownIdentity) get(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	var s corev1.Secret
	err := o.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s)
	return &s, err
}

func (o ownIdentity) list(ctx context.Context, namespace string, selector labels.Selector, limit int64, continueToken string) ([]corev1.Secret, string, error) {
	var list corev1.SecretList
	err := o.reader.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: selector},
		client.Limit(limit), client.Continue(continueToken))
	return list.Items, list.Continue, err
}

func (o ownIdentity) create(ctx context.Context, s *corev1.Secret) error {
	return o.writer.Create(ctx, s)
}
func (o ownIdentity) update(ctx context.Context, s *corev1.Secret) error {
	return o.writer.Update(ctx, s)
}
func (o ownIdentity) delete(ctx context.Context, s *corev1.Secret) error {
	return o.writer.Delete(ctx, s, client.Preconditions{UID: &s.UID, ResourceVersion: &s.ResourceVersion})
}
