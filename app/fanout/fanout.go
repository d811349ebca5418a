// Package fanout keeps one child object in every namespace a cluster-scoped
// parent selects, creating, updating and deleting children as namespaces
// come, change labels and go. ClusterExternalSecrets (children:
// ExternalSecrets) and ClusterPushSecrets (PushSecrets) share it.
package fanout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ErrInvalidSelector: a namespace selector does not parse.
var ErrInvalidSelector = errors.New("invalid namespace selector")

// MatchingNamespaces lists, sorted, the live namespaces any selector
// matches or names lists.
func MatchingNamespaces(ctx context.Context, c client.Reader, selectors []*metav1.LabelSelector, names []string) ([]string, error) {
	var parsed []labels.Selector
	for i, s := range selectors {
		sel, err := metav1.LabelSelectorAsSelector(s)
		if err != nil {
			return nil, fmt.Errorf("%w %d: %v", ErrInvalidSelector, i, err)
		}
		parsed = append(parsed, sel)
	}
	var list corev1.NamespaceList
	if err := c.List(ctx, &list); err != nil {
		return nil, err
	}
	var out []string
	for _, ns := range list.Items {
		if ns.Status.Phase == corev1.NamespaceTerminating || !ns.DeletionTimestamp.IsZero() {
			continue
		}
		match := slices.Contains(names, ns.Name)
		for _, sel := range parsed {
			match = match || sel.Matches(labels.Set(ns.Labels))
		}
		if match {
			out = append(out, ns.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Children describes the children of one parent.
type Children[C client.Object] struct {
	// Parent is the cluster-scoped object that controls the children.
	Parent client.Object
	// Kind names the children in messages, e.g. "ExternalSecret".
	Kind string
	// Name is the children's name.
	Name string
	// Label, if set, marks each child with OwnerLabel(Parent), and children
	// are listed by it (upstream's ClusterExternalSecret labels its
	// children). Without it a child carries only the labels Fill gives
	// it, and children are listed through the IndexController field index.
	Label string
	// Taken is a namespace's failure reason when a child of that name
	// exists that the parent does not control.
	Taken string
	// New returns an empty child; List lists children (by label or field).
	New  func() C
	List func(ctx context.Context, c client.Reader, opts ...client.ListOption) ([]C, error)
	// Fill sets what the parent decides on a child: its spec, labels and
	// annotations (the owner label, if any, and the reference are added
	// after).
	Fill func(child C)
	// Spec returns a child's spec, to tell whether it is as Fill says.
	Spec func(child C) any
	// Sharded, if set, says the child's kind is cached only in the
	// namespaces this replica works (--shards auto), and the metadata of
	// children that carry Label cluster-wide. Only kinds with a Label.
	Sharded *ShardedReads
}

// same reports whether existing already holds what desired says.
func (ch Children[C]) same(existing, desired C) bool {
	return equality.Semantic.DeepEqual(ch.Spec(existing), ch.Spec(desired)) && sameMeta(existing, desired)
}

// Ensure makes namespace hold the child as the parent says, writing only
// when it differs. A child of that name the parent does not control is
// left alone and reported.
func (ch Children[C]) Ensure(ctx context.Context, c client.Client, namespace string) error {
	key := client.ObjectKey{Namespace: namespace, Name: ch.Name}
	existing, found, err := ch.current(ctx, c, key)
	if errors.Is(err, errChecked) {
		return nil
	}
	if err != nil {
		return err
	}
	if found && !metav1.IsControlledBy(existing, ch.Parent) {
		return errors.New(ch.Taken)
	}
	desired, err := ch.desired(c, existing.DeepCopyObject().(C), key)
	if err != nil {
		return err
	}
	switch {
	case !found:
		err = c.Create(ctx, desired)
	case ch.same(existing, desired):
		ch.checked(existing, desired, nil)
		return nil
	default:
		err = c.Update(ctx, desired)
	}
	ch.checked(desired, desired, err)
	return err
}

// desired is child (an empty one, or a copy of the existing) as the parent
// says: Fill's spec, labels and annotations, the owner label, the
// controller reference.
func (ch Children[C]) desired(c client.Client, child C, key client.ObjectKey) (C, error) {
	child.SetNamespace(key.Namespace)
	child.SetName(key.Name)
	ch.Fill(child)
	if ch.Label != "" {
		l := child.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[ch.Label] = OwnerLabel(ch.Parent.GetName())
		child.SetLabels(l)
	}
	return child, controllerutil.SetControllerReference(ch.Parent, child, c.Scheme())
}

// Prune deletes the children the parent controls that no longer belong:
// their namespace stopped matching, or the name changed. Children are
// found by the owner label or the controller index, one list from the
// cache; only those whose controller reference is the parent's are
// deleted, whatever labels a tenant gives its own objects.
func (ch Children[C]) Prune(ctx context.Context, c client.Client, namespaces []string) error {
	children, err := ch.listAll(ctx, c)
	if err != nil {
		return err
	}
	for _, child := range children {
		if !metav1.IsControlledBy(child, ch.Parent) || (child.GetName() == ch.Name && slices.Contains(namespaces, child.GetNamespace())) {
			continue
		}
		uid := child.GetUID()
		if err := c.Delete(ctx, child, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %s %s/%s: %w", ch.Kind, child.GetNamespace(), child.GetName(), err)
		}
	}
	return nil
}

// listAll lists the children the parent may control, in every namespace:
// with --shards auto those that carry Label from the cluster-wide cache of
// their metadata (see ShardedReads), otherwise by Label or through the
// IndexController index.
func (ch Children[C]) listAll(ctx context.Context, c client.Client) ([]client.Object, error) {
	if ch.Sharded != nil {
		return ch.listMetadata(ctx, c)
	}
	var owned client.ListOption = client.MatchingFields{IndexController: string(ch.Parent.GetUID())}
	if ch.Label != "" {
		owned = client.MatchingLabels{ch.Label: OwnerLabel(ch.Parent.GetName())}
	}
	children, err := ch.List(ctx, c, owned)
	out := make([]client.Object, len(children))
	for i, child := range children {
		out[i] = child
	}
	return out, err
}

// IndexController is the field index of children by the UID of their
// controller reference, for the kinds whose children carry no owner label.
const IndexController = "metadata.controllerUID"

// ControllerUID is what IndexController indexes an object by: the UID of
// its controller reference, if it has one.
func ControllerUID(o client.Object) []string {
	if ref := metav1.GetControllerOf(o); ref != nil {
		return []string{string(ref.UID)}
	}
	return nil
}

// RequeueAll maps any event to a request for every parent list holds (a
// new, empty list of the parent kind): any parent may select a namespace
// that changed.
func RequeueAll(c client.Reader, newList func() client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		list := newList()
		if err := c.List(ctx, list); err != nil {
			return nil
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(items))
		for _, o := range items {
			if obj, ok := o.(client.Object); ok {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: obj.GetName()}})
			}
		}
		return reqs
	}
}

// Interval is a parent's refresh interval: d, or a minute when unset
// (namespaces are watched besides).
func Interval(d *metav1.Duration) time.Duration {
	if d == nil || d.Duration <= 0 {
		return time.Minute
	}
	return d.Duration
}

// OwnerLabel is the label value marking a parent's children: its name, or
// for names longer than a label value may be, a prefix and a digest.
// Ownership itself is the controller reference.
func OwnerLabel(name string) string {
	if len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:46] + "-" + hex.EncodeToString(sum[:])[:16]
}
