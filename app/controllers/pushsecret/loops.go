package pushsecret

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/app/stores"
)

// errLoop: pushing would write a value back where it was read from.
var errLoop = errors.New("push loop refused")

// refuseLoops marks each store that an ExternalSecret reads a source Secret
// from: pushing the Secret there would feed it back into itself (and
// another PushSecret or refresh round would keep the loop turning). A store
// over the same backend counts as the same store. The other stores are
// pushed to as usual.
func (r *Reconciler) refuseLoops(ctx context.Context, ps *esv1alpha1.PushSecret, sources []corev1.Secret, current []*pushStore) {
	for _, src := range sources {
		writer := src.Annotations[esv1.AnnotationManagedBy]
		if src.Labels[esv1.LabelManaged] != esv1.LabelManagedValue || writer == "" {
			continue
		}
		var es esv1.ExternalSecret
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ps.Namespace, Name: writer}, &es); err != nil {
			if apierrors.IsNotFound(err) {
				continue // the ExternalSecret is gone: the Secret is nobody's copy any more
			}
			refuseAll(current, fmt.Errorf("checking whether Secret %s is written by ExternalSecret %s: %w", src.Name, writer, err))
			return
		}
		for _, ref := range stores.RefsOf(&es) {
			store, err := r.Resolver.Get(ctx, es.Namespace, ref)
			if errors.Is(err, stores.ErrStoreNotFound) {
				continue // nothing is read through a store that does not exist
			}
			if err != nil {
				refuseAll(current, fmt.Errorf("reading the store ExternalSecret %s reads Secret %s from: %w", es.Name, src.Name, err))
				return
			}
			read := usable(ctx, r.Resolver, store, es.Namespace)
			for _, s := range current {
				if s.err != nil {
					continue
				}
				if s.target.key() == read.target.key() || (s.backend != "" && s.backend == read.backend) {
					s.err = fmt.Errorf("%w: Secret %s is written by ExternalSecret %s from %s; pushing it to %s would feed it back",
						errLoop, src.Name, es.Name, read.target.key(), s.target.key())
				}
			}
		}
	}
}

// refuseAll refuses every push not refused yet: whether it would feed a
// loop is unknown, so nothing is pushed this time.
func refuseAll(current []*pushStore, err error) {
	for _, s := range current {
		if s.err == nil {
			s.err = err
		}
	}
}
