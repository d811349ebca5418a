// Package steps is the grammar every controller of eso speaks: a reconcile
// is one scope (the object and what the reconcile learns of it) and a list
// of named steps over it. Each step reads and fills in the scope, then lets
// the next step run or ends the run with an outcome: an ExternalSecret's
// or a PushSecret's sync, a store's or a generator's validation. Each step
// is a function with a table test of its own; the controller turns the
// outcome into a status, an event and a requeue in one place.
package steps

import (
	"context"
)

// Step is one stage of a run over a scope of type S. It returns the zero
// outcome to let the next step run, or the outcome that ends the run, with
// the error that ended it, if any.
type Step[S any, O comparable] func(ctx context.Context, scope S) (O, error)

// Run runs steps in order over scope. The first step that returns an
// outcome other than the zero one, or an error, ends the run: Run returns
// both. When every step lets the next one run, Run returns the zero
// outcome and no error.
func Run[S any, O comparable](ctx context.Context, scope S, steps ...Step[S, O]) (O, error) {
	var zero O
	for _, step := range steps {
		if out, err := step(ctx, scope); err != nil || out != zero {
			return out, err
		}
	}
	return zero, nil
}
