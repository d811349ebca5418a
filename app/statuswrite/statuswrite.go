// Package statuswrite is how every controller writes an object's status:
// only when it changed, as a merge patch, counted.
package statuswrite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/eso-dev/eso/app/metrics"
)

// lateWrite bounds the status write of a reconcile that ran out of time.
const lateWrite = 10 * time.Second

// IfChanged writes obj's status when it differs from before, the status as
// read, and reports whether it wrote. status returns a pointer to an
// object's status. The patch is a merge patch of the status alone, from
// before to obj's, so a concurrent edit of the spec is no conflict; each
// write counts in eso_status_writes_total under kind. The API server
// answers with the object's metadata only, and obj takes it (its
// resourceVersion, finalizers, labels: what a later patch of obj builds
// on), its annotations aside: they stay as read, where package lenient
// records a decode error. Decoding the whole object back was a tenth of
// eso's CPU in a first sync.
//
// With recent (nil: none), the write is remembered until the cache shows
// it: see Recent.
//
// A reconcile that ran out of time (a provider that did not answer before
// the reconcile deadline) still reports it: its status is written on a
// short deadline of its own. Otherwise the object would show its previous
// outcome for as long as the provider hangs. A cancelled context (eso
// stopping) writes nothing.
func IfChanged[S any](ctx context.Context, c client.Client, recent *Recent, obj client.Object, before S, status func(client.Object) *S, kind string) (bool, error) {
	if equality.Semantic.DeepEqual(before, *status(obj)) {
		return false, nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), lateWrite)
		defer cancel()
	}
	patch, err := statusPatch(before, *status(obj))
	if err != nil {
		return false, fmt.Errorf("writing %s status: %w", kind, err)
	}
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return false, fmt.Errorf("writing %s status: %w", kind, err)
	}
	written := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
	written.SetGroupVersionKind(gvk)
	if err := c.Status().Patch(ctx, written, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return false, fmt.Errorf("writing %s status: %w", kind, err)
	}
	takeMetadata(obj, &written.ObjectMeta)
	recent.wrote(obj)
	metrics.StatusWrites.WithLabelValues(kind).Inc()
	return true, nil
}

// takeMetadata gives obj the metadata the API server answered with, its
// annotations aside.
func takeMetadata(obj client.Object, answer *metav1.ObjectMeta) {
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if meta, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			annotations := meta.Annotations
			*meta = *answer
			meta.Annotations = annotations
			return
		}
	}
	obj.SetResourceVersion(answer.ResourceVersion) // a kind without an embedded ObjectMeta
}

// statusPatch is the JSON merge patch {"status": ...} that turns before
// into after: what a merge patch between the whole objects would hold, as
// only their statuses differ, without encoding the rest of them twice.
func statusPatch[S any](before, after S) ([]byte, error) {
	diff, err := json.Marshal(after)
	if err != nil {
		return nil, err
	}
	// A first status (every object's first sync) has nothing to remove:
	// the patch is the new status as it is, without decoding both sides
	// to compare them. The zero status still encodes its fields without
	// omitempty, as null or {} (TestZeroStatusesEncodeNoValues): a {} sent
	// again changes nothing, but a null removes, so a status holding one (a
	// zero refreshTime) is diffed as any other, and a stored value the
	// cache did not show yet is not removed. A "null" inside a string
	// (a message) only costs that status the diff.
	if !reflect.ValueOf(before).IsZero() || bytes.Contains(diff, []byte("null")) {
		from, err := json.Marshal(before)
		if err != nil {
			return nil, err
		}
		if diff, err = jsonpatch.CreateMergePatch(from, diff); err != nil {
			return nil, err
		}
	}
	patch := make([]byte, 0, len(`{"status":}`)+len(diff))
	patch = append(append(append(patch, `{"status":`...), diff...), '}')
	return patch, nil
}

// settle is how long a write is remembered: far longer than a watch event
// takes to reach the cache on a live API server. Entries live between one
// and two settles, so memory follows the write rate, not the object count.
const settle = 30 * time.Second

// Recent remembers the status writes of one controller until its cache
// shows them, so its reconciles read their own writes. A retry after a
// failure comes on a backoff, not on the watch event of the failure's
// status write, and may read the object from a cache that does not show
// that write yet. Deciding from that copy, a recovery would equal the
// status from before the failure and not be written, and the object would
// show the failure until its next refresh. The zero value is ready to use
// once API is set; without API the cache is trusted.
type Recent struct {
	// API reads an object from the API server, past the cache.
	API client.Reader

	mu             sync.Mutex
	current, older map[types.NamespacedName]string // resourceVersion written
	rotated        time.Time
}

// wrote records that obj's status was written, obj holding the answer.
func (r *Recent) wrote(obj client.Object) {
	if r == nil || r.API == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rotateLocked()
	r.current[client.ObjectKeyFromObject(obj)] = obj.GetResourceVersion()
}

// unseen reports whether obj, as read from the cache, may predate a status
// write recorded by wrote. A copy at the written version shows the write,
// which is then forgotten; a copy at any other version is to be read
// again (a newer one, an edit after the write, costs that one read).
func (r *Recent) unseen(obj client.Object) bool {
	if r == nil || r.API == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rotateLocked()
	key := client.ObjectKeyFromObject(obj)
	version, ok := r.current[key]
	if !ok {
		if version, ok = r.older[key]; !ok {
			return false
		}
	}
	if version != obj.GetResourceVersion() {
		return true
	}
	r.forgetLocked(key)
	return false
}

// Get reads obj through c (the cache), and again from the API server when
// that copy may predate this controller's last status write of it.
func (r *Recent) Get(ctx context.Context, c client.Reader, key client.ObjectKey, obj client.Object) error {
	if err := c.Get(ctx, key, obj); err != nil {
		return err
	}
	return r.fresh(ctx, obj)
}

// fresh reads obj again from the API server when the copy read from the
// cache may predate this controller's last status write of it.
func (r *Recent) fresh(ctx context.Context, obj client.Object) error {
	if !r.unseen(obj) {
		return nil
	}
	if err := r.API.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	r.forget(obj)
	return nil
}

// forget drops obj's write once the API server's copy was read.
func (r *Recent) forget(obj client.Object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forgetLocked(client.ObjectKeyFromObject(obj))
}

func (r *Recent) forgetLocked(key types.NamespacedName) {
	delete(r.current, key)
	delete(r.older, key)
}

func (r *Recent) rotateLocked() {
	now := time.Now()
	if r.current == nil {
		r.current, r.rotated = map[types.NamespacedName]string{}, now
	}
	if now.Sub(r.rotated) >= settle {
		r.older, r.current, r.rotated = r.current, map[types.NamespacedName]string{}, now
	}
}
