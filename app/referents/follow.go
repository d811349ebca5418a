package referents

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/eso-dev/eso/app/sharding"
)

// Following, as opposed to awaiting, is for objects an owner reads every
// time it runs (a PushSecret's source Secrets): the watches last as long as
// the owner names the Secrets, and every change re-queues it.

// MaxFollowedPerNamespace is how many distinct sources of one namespace get
// a watch each; past it, the namespace's Secrets are followed by one watch
// of the whole namespace (metadata only, nothing cached), so the number of
// watches stays bounded whatever a tenant creates.
const MaxFollowedPerNamespace = 32

// Source is Secrets (or ConfigMaps) of one namespace an owner reads: one by
// name, or those a label selector matches.
type Source struct {
	// Kind is "Secret" (when empty) or "ConfigMap".
	Kind      string
	Namespace string
	// Name, or else Selector (labels.Selector.String()).
	Name, Selector string
}

func (s Source) kind() string {
	if s.Kind == "" {
		return "Secret"
	}
	return s.Kind
}

func (s Source) matches(kind, name string, objLabels map[string]string) bool {
	if s.kind() != kind {
		return false
	}
	if s.Name != "" {
		return s.Name == name
	}
	sel, err := labels.Parse(s.Selector)
	return err == nil && sel.Matches(labels.Set(objLabels))
}

// namespaceFollow is what is followed in one namespace.
type namespaceFollow struct {
	owners  map[waiter][]Source
	watches map[Source]context.CancelFunc // one per source, or
	wide    map[string]context.CancelFunc // one per kind for the namespace
}

// Follow re-queues req whenever a Secret of sources is created, changed or
// deleted, until Follow is called again (replacing them) or Unfollow.
func (q *Queue) Follow(req reconcile.Request, sources []Source) {
	if q == nil {
		return
	}
	w := q.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx == nil || w.ctx.Err() != nil {
		return
	}
	owner := waiter{q, req}
	touched := map[string]bool{}
	for ns, nf := range w.follows {
		if _, ok := nf.owners[owner]; ok {
			delete(nf.owners, owner)
			touched[ns] = true
		}
	}
	for _, s := range sources {
		nf := w.follows[s.Namespace]
		if nf == nil {
			nf = &namespaceFollow{owners: map[waiter][]Source{}, watches: map[Source]context.CancelFunc{}, wide: map[string]context.CancelFunc{}}
			w.follows[s.Namespace] = nf
		}
		nf.owners[owner] = append(nf.owners[owner], s)
		touched[s.Namespace] = true
	}
	for ns := range touched {
		w.rewatchLocked(ns)
	}
}

// Unfollow stops re-queueing req for any Secret.
func (q *Queue) Unfollow(req reconcile.Request) { q.Follow(req, nil) }

// UnfollowReleased stops following for the requests of this queue whose
// object works (sharding.Key) rejects: with --shards auto, those of the
// namespaces this replica gave up, whose new owner follows them.
func (q *Queue) UnfollowReleased(works func(key string) bool) {
	if q == nil {
		return
	}
	w := q.w
	w.mu.Lock()
	defer w.mu.Unlock()
	for ns, nf := range w.follows {
		touched := false
		for owner := range nf.owners {
			if owner.queue == q && !works(sharding.Key(owner.req.Namespace, owner.req.Name)) {
				delete(nf.owners, owner)
				touched = true
			}
		}
		if touched {
			w.rewatchLocked(ns)
		}
	}
}

// Following is how many watches follow sources now.
func (w *Watcher) Following() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, nf := range w.follows {
		n += len(nf.watches) + len(nf.wide)
	}
	return n
}

// rewatchLocked makes namespace ns's watches match what its owners follow.
func (w *Watcher) rewatchLocked(ns string) {
	nf := w.follows[ns]
	wanted := map[Source]bool{}
	for _, sources := range nf.owners {
		for _, s := range sources {
			wanted[s] = true
		}
	}
	wide := len(wanted) > MaxFollowedPerNamespace
	kinds := map[string]bool{}
	for s := range wanted {
		kinds[s.kind()] = true
	}
	for s, cancel := range nf.watches {
		if wide || !wanted[s] {
			cancel()
			delete(nf.watches, s)
		}
	}
	for kind, cancel := range nf.wide {
		if !wide || !kinds[kind] {
			cancel()
			delete(nf.wide, kind)
		}
	}
	switch {
	case len(wanted) == 0:
		delete(w.follows, ns)
	case wide:
		for kind := range kinds {
			if nf.wide[kind] == nil {
				ctx, cancel := context.WithCancel(w.ctx)
				nf.wide[kind] = cancel
				go w.followWatch(ctx, kind, ns, metav1.ListOptions{})
			}
		}
	default:
		for s := range wanted {
			if nf.watches[s] == nil {
				ctx, cancel := context.WithCancel(w.ctx)
				nf.watches[s] = cancel
				opts := metav1.ListOptions{LabelSelector: s.Selector}
				if s.Name != "" {
					opts = metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", s.Name).String()}
				}
				go w.followWatch(ctx, s.kind(), ns, opts)
			}
		}
	}
}

// followWatch watches the objects of kind in ns that opts select until ctx ends,
// opening the watch again whenever the server closes it. It remembers the
// version of each Secret it saw, so the replay of a reopened watch
// re-queues nobody for a Secret that did not change.
func (w *Watcher) followWatch(ctx context.Context, kind, ns string, opts metav1.ListOptions) {
	seen := map[string]string{}
	// Refused (eso may not watch there): its owners keep their refresh.
	w.keepWatching(ctx, resources[kind], ns, opts, func(events watch.Interface) bool {
		w.followEvents(ctx, kind, ns, events, seen)
		return false
	})
}

func (w *Watcher) followEvents(ctx context.Context, kind, ns string, events watch.Interface, seen map[string]string) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events.ResultChan():
			if !ok {
				return
			}
			obj, ok := ev.Object.(metav1.Object)
			if !ok {
				continue // an error: the server ends the watch next
			}
			name, version := obj.GetName(), obj.GetResourceVersion()
			switch ev.Type {
			case watch.Added, watch.Modified:
				if seen[name] == version {
					continue
				}
				seen[name] = version
			case watch.Deleted:
				delete(seen, name)
			default:
				continue
			}
			w.notifyFollowers(kind, ns, name, obj.GetLabels())
		}
	}
}

// notifyFollowers re-queues the owners following an object of kind in ns.
func (w *Watcher) notifyFollowers(kind, ns, name string, objLabels map[string]string) {
	w.mu.Lock()
	var due []waiter
	if nf := w.follows[ns]; nf != nil {
		for owner, sources := range nf.owners {
			if slices.ContainsFunc(sources, func(s Source) bool { return s.matches(kind, name, objLabels) }) {
				due = append(due, owner)
			}
		}
	}
	w.mu.Unlock()
	for _, owner := range due {
		owner.queue.add(owner.req)
	}
}
