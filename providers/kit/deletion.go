package kit

import (
	"context"
	"errors"
	"fmt"

	"github.com/eso-dev/eso/providers/plugin"
)

// Deletion is DeleteSecret of a backend whose secrets are JSON objects: a
// secret that is absent is already deleted; one eso does not manage is
// refused with plugin.ErrNotManaged; with a property only that field goes
// (nothing is written when it is already absent) and the secret goes with
// its last field. The functions are called in that order, so State may
// capture what Rewrite and Delete need (a version, an etag).
type Deletion struct {
	// Key and Property are what to delete; Property empty is the whole secret.
	Key, Property string
	// State reports whether the secret exists and carries eso's ManagedBy mark.
	State func(ctx context.Context) (exists, managed bool, err error)
	// Current reads the secret's current value, for deleting a property.
	Current func(ctx context.Context) ([]byte, error)
	// Rewrite writes the fields left after deleting the property.
	Rewrite func(ctx context.Context, rest []byte) error
	// Delete deletes the whole secret.
	Delete func(ctx context.Context) error
}

// Run deletes.
func (d Deletion) Run(ctx context.Context) error {
	exists, managed, err := d.State(ctx)
	if err != nil || !exists {
		return err
	}
	if !managed {
		return fmt.Errorf("%w: secret %q", plugin.ErrNotManaged, d.Key)
	}
	if d.Property != "" {
		current, err := d.Current(ctx)
		if err != nil {
			return err
		}
		rest, empty, err := DeleteProperty(current, d.Property)
		if errors.Is(err, plugin.ErrPropertyNotFound) {
			return nil // already gone: nothing to write
		}
		if err != nil {
			return err
		}
		if !empty {
			return d.Rewrite(ctx, rest)
		}
	}
	return d.Delete(ctx)
}
