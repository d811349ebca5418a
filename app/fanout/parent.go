package fanout

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// What a parent reconcile shares whatever its kind: spreading its child
// over the namespaces it selects, the Ready condition that follows, the
// status write and the controller's watches.

// Failure is a namespace that could not get the child, and why.
type Failure struct{ Namespace, Reason string }

// Spread is the outcome of making the selected namespaces hold the child.
type Spread struct {
	// Selected are the namespaces the parent selects.
	Selected []string
	// Provisioned hold the child as the parent says; Failed could not get it.
	Provisioned []string
	Failed      []Failure
}

// SpreadOver spreads the child over the namespaces that selectors and
// names select, and returns the parent's Ready condition after it. A
// selector that cannot be read selects nothing: no spread, and a Ready
// condition that says why (only an edit of the parent helps).
func (ch Children[C]) SpreadOver(ctx context.Context, c client.Client, selectors []*metav1.LabelSelector, names []string) (*Spread, metav1.Condition, error) {
	namespaces, err := MatchingNamespaces(ctx, c, selectors, names)
	if errors.Is(err, ErrInvalidSelector) {
		return nil, NotReady(ch.Parent, esv1.ReasonInvalidSelector, err.Error()), nil
	}
	if err != nil {
		return nil, metav1.Condition{}, err
	}
	spread, err := ch.Spread(ctx, c, namespaces)
	if err != nil {
		return nil, metav1.Condition{}, err
	}
	return &spread, ch.Ready(spread), nil
}

// Spread makes every namespace of selected hold the child and deletes the
// children that no longer belong. A namespace that cannot get it (a
// tenant's object of that name) is recorded and the others go on; a
// conflict (a stale cache) ends the spread, to be retried.
func (ch Children[C]) Spread(ctx context.Context, c client.Client, selected []string) (Spread, error) {
	out := Spread{Selected: selected}
	for _, ns := range selected {
		if err := ch.Ensure(ctx, c, ns); err != nil {
			if apierrors.IsConflict(err) {
				return out, err
			}
			out.Failed = append(out.Failed, Failure{Namespace: ns, Reason: err.Error()})
			continue
		}
		out.Provisioned = append(out.Provisioned, ns)
	}
	return out, ch.Prune(ctx, c, selected)
}

// Ready is the parent's Ready condition after s, for its generation.
func (ch Children[C]) Ready(s Spread) metav1.Condition {
	c := metav1.Condition{Type: esv1.ConditionReady, Status: metav1.ConditionTrue, Reason: esv1.ReasonProvisioned,
		Message: fmt.Sprintf("%s %s is in %d namespaces", ch.Kind, ch.Name, len(s.Selected)), ObservedGeneration: ch.Parent.GetGeneration()}
	if len(s.Failed) > 0 {
		c.Status, c.Reason = metav1.ConditionFalse, esv1.ReasonNamespacesFailed
		c.Message = fmt.Sprintf("%d of %d namespaces could not get %s %s", len(s.Failed), len(s.Selected), ch.Kind, ch.Name)
	}
	return c
}

// NotReady is the Ready condition of a parent that selects nothing yet:
// its spec or a selector cannot be read.
func NotReady(parent client.Object, reason, message string) metav1.Condition {
	return metav1.Condition{Type: esv1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: message,
		ObservedGeneration: parent.GetGeneration()}
}

// ListOf lists children of one kind: the items of the list newList
// returns, as pointers.
func ListOf[L client.ObjectList, T any, P interface {
	*T
	client.Object
}](newList func() L, items func(L) []T) func(ctx context.Context, c client.Reader, opts ...client.ListOption) ([]P, error) {
	return func(ctx context.Context, c client.Reader, opts ...client.ListOption) ([]P, error) {
		list := newList()
		if err := c.List(ctx, list, opts...); err != nil {
			return nil, err
		}
		all := items(list)
		out := make([]P, len(all))
		for i := range all {
			out[i] = P(&all[i])
		}
		return out, nil
	}
}

// sameMeta reports whether existing carries the labels and annotations
// desired says.
func sameMeta(existing, desired client.Object) bool {
	return equality.Semantic.DeepEqual(existing.GetLabels(), desired.GetLabels()) &&
		equality.Semantic.DeepEqual(existing.GetAnnotations(), desired.GetAnnotations())
}
