package fanout

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/eso-dev/eso/app/shardcache"
)

// With --shards auto a parent is worked by one replica, but its children
// live in namespaces other replicas work, where this replica does not cache
// the child's kind. It caches instead, cluster-wide, the metadata of the
// children that carry the owner label (Children.Label): that is how it
// finds and watches them. It reads a child from the API server only when
// its metadata shows a change since the child was last found as the parent
// says: a new generation (a spec edit), other labels or annotations, or a
// new parent spec. A parent's steady reconcile reads nothing.

// ShardedReads is what a parent's reconcile needs with --shards auto.
type ShardedReads struct {
	// Uncached reads a child from the API server.
	Uncached client.Reader
	// Before are the children found as the parent says at its last
	// reconcile; After collects them in this one.
	Before, After map[types.UID]Checked
	// want is the digest of the spec the parent says, once computed.
	want *[sha256.Size]byte
}

// Checked is a child found as the parent says: its generation then, and a
// digest of the spec the parent said.
type Checked struct {
	Generation int64
	Spec       [sha256.Size]byte
}

// errChecked: the child is as the parent says, judged from its metadata.
var errChecked = errors.New("child unchanged since it was checked")

// current returns the child of key: from the cache of its kind where this
// replica holds one, else from the API server, unless its metadata shows
// it unchanged since it was found as the parent says (errChecked).
func (ch Children[C]) current(ctx context.Context, c client.Client, key client.ObjectKey) (C, bool, error) {
	existing := ch.New()
	err := c.Get(ctx, key, existing)
	if ch.Sharded == nil {
		return existing, err == nil, client.IgnoreNotFound(err)
	}
	m, err2 := ch.metadata(ctx, c, key)
	if err2 != nil {
		return existing, false, err2
	}
	if !shardcache.IsNotOwned(err) {
		if client.IgnoreNotFound(err) != nil {
			return existing, false, err
		}
		// Two caches: the metadata one may have seen an edit (it is what
		// is watched) that the other has not yet.
		if (m != nil) == (err == nil && ch.labelled(existing)) && (m == nil || sameState(m, existing)) {
			return existing, err == nil, nil
		}
	} else if m != nil {
		// Another replica's namespace: the metadata, and what was checked,
		// may spare the read.
		unchanged, err := ch.unchanged(c, key, m)
		if err != nil {
			return existing, false, err
		}
		if unchanged {
			return existing, true, errChecked
		}
	}
	existing = ch.New()
	err = ch.Sharded.Uncached.Get(ctx, key, existing)
	return existing, err == nil, client.IgnoreNotFound(err)
}

// unchanged reports whether the child whose cached metadata is m was found
// as the parent says at the last reconcile and has not changed since: the
// same generation, labels and annotations, and the parent says the same.
func (ch Children[C]) unchanged(c client.Client, key client.ObjectKey, m *metav1.PartialObjectMetadata) (bool, error) {
	last, ok := ch.Sharded.Before[m.UID]
	if !ok || last.Generation != m.Generation || !metav1.IsControlledBy(m, ch.Parent) {
		return false, nil
	}
	want, err := ch.desired(c, ch.New(), key)
	if err != nil {
		return false, err
	}
	spec, encoded := ch.wantDigest(want)
	if !encoded || last.Spec != spec || !sameMeta(m, want) {
		return false, nil
	}
	ch.Sharded.After[m.UID] = last
	return true, nil
}

// metadata is the cached metadata of the labelled child of key, or nil.
func (ch Children[C]) metadata(ctx context.Context, c client.Client, key client.ObjectKey) (*metav1.PartialObjectMetadata, error) {
	gvk, err := apiutil.GVKForObject(ch.New(), c.Scheme())
	if err != nil {
		return nil, err
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, key, m); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if !ch.labelled(m) {
		return nil, nil
	}
	return m, nil
}

func (ch Children[C]) labelled(o metav1.Object) bool {
	_, ok := o.GetLabels()[ch.Label]
	return ok
}

// sameState: the cached child and its cached metadata are of one version,
// as far as Ensure judges it.
func sameState(m *metav1.PartialObjectMetadata, child client.Object) bool {
	return m.Generation == child.GetGeneration() && sameMeta(m, child) &&
		equality.Semantic.DeepEqual(m.OwnerReferences, child.GetOwnerReferences())
}

// checked records child (as read, or as written) as found as want says,
// after err (the write that made it so, if any) succeeded.
func (ch Children[C]) checked(child, want C, err error) {
	if ch.Sharded == nil || err != nil || child.GetUID() == "" {
		return
	}
	if spec, ok := ch.wantDigest(want); ok {
		ch.Sharded.After[child.GetUID()] = Checked{Generation: child.GetGeneration(), Spec: spec}
	}
}

// wantDigest identifies the spec the parent says, computed once per
// reconcile: it is the same in every namespace. False if it does not
// encode: then nothing is remembered, and every child is read.
func (ch Children[C]) wantDigest(want C) ([sha256.Size]byte, bool) {
	if ch.Sharded.want == nil {
		b, err := json.Marshal(ch.Spec(want))
		if err != nil {
			return [sha256.Size]byte{}, false
		}
		sum := sha256.Sum256(b)
		ch.Sharded.want = &sum
	}
	return *ch.Sharded.want, true
}

// listMetadata lists the labelled children from the cluster-wide cache of
// their metadata.
func (ch Children[C]) listMetadata(ctx context.Context, c client.Client) ([]client.Object, error) {
	gvk, err := apiutil.GVKForObject(ch.New(), c.Scheme())
	if err != nil {
		return nil, err
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, list, client.MatchingLabels{ch.Label: OwnerLabel(ch.Parent.GetName())}); err != nil {
		return nil, err
	}
	out := make([]client.Object, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}
