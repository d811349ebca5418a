package referents

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func labelled(namespace, name, version string, l map[string]string) runtime.Object {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, ResourceVersion: version, Labels: l}}
}

// TestFollowRequeuesOnEveryChange: a followed Secret's creation, change and
// deletion each re-queue its owner; the replay of a reopened watch (same
// version) does not.
func TestFollowRequeuesOnEveryChange(t *testing.T) {
	_, srv, wq, q := newWatcher(t)
	q.Follow(request("push"), []Source{{Namespace: "ns", Name: "src"}})
	fw := srv.opened(t, "ns", "src")
	for _, step := range []struct {
		send func()
		want bool
	}{
		{func() { fw.Add(object("ns", "src", "1")) }, true},
		{func() { fw.Modify(object("ns", "src", "2")) }, true},
		{func() { fw.Add(object("ns", "src", "2")) }, false}, // a replay
		{func() { fw.Delete(object("ns", "src", "3")) }, true},
	} {
		step.send()
		if r, ok := next(wq); ok != step.want || (ok && r != request("push")) {
			t.Fatalf("queued %v (%v), want %v", r, ok, step.want)
		}
	}
}

// TestFollowByLabels: a label-selected source is watched with its selector,
// and only matching Secrets re-queue.
func TestFollowByLabels(t *testing.T) {
	_, srv, wq, q := newWatcher(t)
	q.Follow(request("push"), []Source{{Namespace: "ns", Selector: "push=me"}})
	fw := srv.openedAs(t, "ns/|push=me")
	fw.Add(labelled("ns", "other", "1", map[string]string{"push": "no"})) // a server ignoring the selector
	if r, ok := next(wq); ok {
		t.Fatalf("a Secret without the labels queued %v", r)
	}
	fw.Add(labelled("ns", "a", "2", map[string]string{"push": "me"}))
	if _, ok := next(wq); !ok {
		t.Fatal("a matching Secret queued nothing")
	}
}

// TestFollowIsReplacedAndEnds: following other Secrets stops the old
// watches; Unfollow stops all.
func TestFollowIsReplacedAndEnds(t *testing.T) {
	w, srv, _, q := newWatcher(t)
	q.Follow(request("push"), []Source{{Namespace: "ns", Name: "a"}})
	srv.opened(t, "ns", "a")
	q.Follow(request("push"), []Source{{Namespace: "ns", Name: "b"}})
	srv.opened(t, "ns", "b")
	if got := w.followedSources("ns"); len(got) != 1 || got[0].Name != "b" {
		t.Fatalf("following %v, want only b", got)
	}
	q.Unfollow(request("push"))
	if n := w.Following(); n != 0 {
		t.Fatalf("%d watches after Unfollow", n)
	}
}

// TestFollowingIsBoundedPerNamespace: past MaxFollowedPerNamespace sources,
// one watch of the namespace replaces them, and still re-queues exactly the
// owners of the Secret that changed.
func TestFollowingIsBoundedPerNamespace(t *testing.T) {
	w, srv, wq, q := newWatcher(t)
	for i := range MaxFollowedPerNamespace + 1 {
		q.Follow(request(fmt.Sprint("push", i)), []Source{{Namespace: "busy", Name: fmt.Sprint("src", i)}})
	}
	if n := w.Following(); n != 1 {
		t.Fatalf("%d watches for %d sources, want the namespace's one", n, MaxFollowedPerNamespace+1)
	}
	fw := srv.openedAs(t, "busy/")
	fw.Add(object("busy", "unfollowed", "1"))
	if r, ok := next(wq); ok {
		t.Fatalf("a Secret nobody follows queued %v", r)
	}
	fw.Add(object("busy", "src7", "2"))
	if r, ok := next(wq); !ok || r != request("push7") {
		t.Fatalf("queued %v (%v), want push7", r, ok)
	}
}

// followedSources lists what ns follows, for tests.
func (w *Watcher) followedSources(ns string) []Source {
	w.mu.Lock()
	defer w.mu.Unlock()
	nf := w.follows[ns]
	if nf == nil {
		return nil
	}
	return slices.Collect(maps.Keys(nf.watches))
}

// TestUnfollowReleased: the follows of the requests of namespaces given up
// end; the others stay.
func TestUnfollowReleased(t *testing.T) {
	w, srv, _, q := newWatcher(t)
	kept := request("push")
	gone := kept
	gone.Namespace = "given-up"
	q.Follow(kept, []Source{{Namespace: kept.Namespace, Name: "a"}})
	srv.opened(t, kept.Namespace, "a")
	q.Follow(gone, []Source{{Namespace: "given-up", Name: "b"}})
	srv.opened(t, "given-up", "b")
	q.UnfollowReleased(func(key string) bool { return key != "given-up" })
	if got := w.followedSources("given-up"); len(got) != 0 {
		t.Errorf("still following %v in a namespace given up", got)
	}
	if got := w.followedSources(kept.Namespace); len(got) != 1 {
		t.Errorf("following %v where the namespace is still worked, want a", got)
	}
}
