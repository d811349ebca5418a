package externalsecret

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// The watch event of a Secret eso has just written brings back nothing its
// ExternalSecret does not know: reconciling it again finds the target as
// recorded and does nothing. In a first sync that was one ExternalSecret
// reconcile in two, so such echoes are dropped (notOwnWrites). Which
// version is the echo is decided by the API server's resourceVersion, never
// by anything a tenant writes into the Secret.

// notOwnWrites passes the events of target Secrets but the echoes of eso's
// own writes (echoesOwnWrite); a deletion always passes.
func (r *Reconciler) notOwnWrites() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return !r.echoesOwnWrite(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool { return !r.echoesOwnWrite(e.ObjectNew) },
	}
}

// echoesOwnWrite reports whether a Secret's event only brings back what
// this process wrote or verified: no other ExternalSecret names the Secret
// as its target, and the ExternalSecret of its name either holds a record
// of this very Secret at this very version, whole in the cache, or is
// writing it right now (writingTarget). An event that arrives while the
// write is in flight is held back until the write returns: dropped if it
// is of the version written, else its ExternalSecret is requeued then.
func (r *Reconciler) echoesOwnWrite(s client.Object) bool {
	key := types.NamespacedName{Namespace: s.GetNamespace(), Name: s.GetName()}
	v, recorded := r.verified.Load(key)
	asRecorded := recorded && v.(verifiedTarget).holds(s)
	w, writing := r.writes.Load(key)
	writing = writing && w.(*targetWrite).target == s.GetName()
	if !asRecorded && !writing {
		return false // someone else's change: no list spent on it
	}
	var others esv1.ExternalSecretList
	if err := r.Client.List(context.Background(), &others, client.InNamespace(s.GetNamespace()),
		client.MatchingFields{indexTarget: s.GetName()}, client.UnsafeDisableDeepCopy); err != nil || len(others.Items) > 0 {
		return false
	}
	return asRecorded || w.(*targetWrite).holdBack(s.GetResourceVersion())
}

// targetWrite is a write of an ExternalSecret's target in flight, and what
// the events of the target that arrived before it returned were of: one
// version can be the write's own, two cannot both be.
type targetWrite struct {
	target string
	mu     sync.Mutex
	// seen is the version of the first event held back; mixed, that a
	// later one was of another version.
	seen  string
	mixed bool
	// closed: the write returned and what was seen was judged. An event
	// the watch looked this write up for just before is passed, not held.
	closed bool
}

// holdBack notes an event of version rv and reports whether it is held
// back (the write has not returned yet).
func (w *targetWrite) holdBack(rv string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	if w.seen == "" {
		w.seen = rv
	} else if rv != w.seen {
		w.mixed = true
	}
	return true
}

// writingTarget marks a write of the ExternalSecret's target (named
// target) as in flight. The returned done is called once the write
// returned, after its result was recorded (verify), with the version
// written ("" when the write failed): an event held back meanwhile that is
// of another version requeues the ExternalSecret. Only its first call
// counts, so a caller may also defer done("") against a panic.
func (r *Reconciler) writingTarget(es *esv1.ExternalSecret, target string) (done func(written string)) {
	key := esKey(es)
	w := &targetWrite{target: target}
	r.writes.Store(key, w)
	return func(written string) {
		r.writes.CompareAndDelete(key, w)
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			return
		}
		w.closed = true
		missed := w.mixed || (w.seen != "" && w.seen != written)
		w.mu.Unlock()
		if !missed {
			return
		}
		if r.Scheduler == nil {
			return
		}
		if q := r.Scheduler.Queue(); q != nil {
			q.Add(reconcile.Request{NamespacedName: key})
		}
	}
}
