// Package statuswrite is how every controller writes an object's status:
// only when it changed, as a merge patch, counted.
package statuswrite

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eso-dev/eso/app/metrics"
)

// IfChanged writes obj's status when it differs from before, the status as
// read, and reports whether it wrote. status returns a pointer to an
// object's status. The patch is a merge patch from obj with before put
// back, so a concurrent edit of the spec is no conflict; each write counts
// in eso_status_writes_total under kind.
func IfChanged[S any](ctx context.Context, c client.Client, obj client.Object, before S, status func(client.Object) *S, kind string) (bool, error) {
	if equality.Semantic.DeepEqual(before, *status(obj)) {
		return false, nil
	}
	orig := obj.DeepCopyObject().(client.Object)
	*status(orig) = before
	if err := c.Status().Patch(ctx, obj, client.MergeFrom(orig)); err != nil {
		return false, fmt.Errorf("writing %s status: %w", kind, err)
	}
	metrics.StatusWrites.WithLabelValues(kind).Inc()
	return true, nil
}
