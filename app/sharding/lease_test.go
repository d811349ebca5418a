package sharding

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	k8stesting "k8s.io/client-go/testing"
)

func TestLivenessJudgesOnItsOwnClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lease := func(id string, renewed time.Time) coordinationv1.Lease {
		return *memberLease("eso-system", "eso-core", id, []string{id}, 15*time.Second, renewed)
	}
	names := func(ls []coordinationv1.Lease) (out []string) {
		for _, l := range ls {
			out = append(out, l.Name)
		}
		return out
	}
	var lv liveness
	// a's renew time is an hour off this replica's clock: it counts as
	// renewed when first seen, whatever it says.
	a, b := lease("a", t0.Add(-time.Hour)), lease("b", t0)
	if live := names(lv.observe([]coordinationv1.Lease{a, b}, t0)); len(live) != 2 {
		t.Fatalf("first seen: live %v, want both", live)
	}
	if want := t0.Add(15 * time.Second); !lv.firstExpiry.Equal(want) {
		t.Errorf("first expiry %v, want %v", lv.firstExpiry, want)
	}
	// b renews at 10 s; a does not.
	b = lease("b", t0.Add(10*time.Second))
	lv.observe([]coordinationv1.Lease{a, b}, t0.Add(10*time.Second))
	if want := t0.Add(15 * time.Second); !lv.firstExpiry.Equal(want) {
		t.Errorf("after b renewed: first expiry %v, want a's, %v", lv.firstExpiry, want)
	}
	// At 15 s a has expired: b alone is live, and the next expiry is b's.
	live := names(lv.observe([]coordinationv1.Lease{a, b}, t0.Add(15*time.Second)))
	if len(live) != 1 || live[0] != "b" {
		t.Fatalf("at 15 s: live %v, want [b]", live)
	}
	if want := t0.Add(25 * time.Second); !lv.firstExpiry.Equal(want) {
		t.Errorf("at 15 s: first expiry %v, want b's, %v", lv.firstExpiry, want)
	}
	// Nothing live: no expiry to wake for.
	lv.observe([]coordinationv1.Lease{a, b}, t0.Add(time.Minute))
	if !lv.firstExpiry.IsZero() {
		t.Errorf("nothing live: first expiry %v, want none", lv.firstExpiry)
	}
}

// A member whose Lease expires unrenewed is taken over when it expires, not
// at the next renewal: here renewals are 20 s apart, the dead member's
// Lease lasts 3 s, and its namespaces must be worked well before 20 s.
func TestExpiryWakesAStep(t *testing.T) {
	cs := fake.NewClientset()
	leases := cs.CoordinationV1().Leases("eso-system")
	keys := namespaces(20)
	dead := memberLease("eso-system", "eso-core", "dead", []string{"alive", "dead"}, 3*time.Second, time.Now())
	if _, err := leases.Create(t.Context(), dead, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := newTestCoordinator(t, leases, "alive", keys, Config{LeaseDuration: 30 * time.Second, RenewDeadline: 25 * time.Second, RetryPeriod: 20 * time.Second})
	runInBackground(t, c)
	worksAll := func() bool {
		for _, k := range keys {
			if !c.Works(k) {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(10 * time.Second)
	for !worksAll() {
		if time.Now().After(deadline) {
			t.Fatalf("10 s on, the dead member's namespaces are not worked: owned %d of %d", countWorked(c, keys), len(keys))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runInBackground runs c until the test ends, and waits for it to stop.
func runInBackground(t *testing.T, c *Coordinator) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func countWorked(c *Coordinator, keys []string) int {
	n := 0
	for _, k := range keys {
		if c.Works(k) {
			n++
		}
	}
	return n
}

// neverSynced is a namespace cache whose namespaces never sync.
type neverSynced struct{}

func (neverSynced) SetNamespaces(ctx context.Context, _ []string) map[string]bool {
	<-ctx.Done()
	return map[string]bool{}
}

func (neverSynced) NamespaceSynced() <-chan struct{} { return nil }

func (neverSynced) Synced([]string) map[string]bool { return map[string]bool{} }

// syncedOnCue is a namespace cache whose namespaces sync when the test says.
type syncedOnCue struct {
	mu     sync.Mutex
	synced map[string]bool
	signal chan struct{}
}

func (c *syncedOnCue) SetNamespaces(_ context.Context, namespaces []string) map[string]bool {
	return c.Synced(namespaces)
}

func (c *syncedOnCue) Synced(namespaces []string) map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]bool{}
	for _, ns := range namespaces {
		if c.synced[ns] {
			out[ns] = true
		}
	}
	return out
}

func (c *syncedOnCue) NamespaceSynced() <-chan struct{} { return c.signal }

func (c *syncedOnCue) sync(namespaces ...string) {
	c.mu.Lock()
	for _, ns := range namespaces {
		c.synced[ns] = true
	}
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
}

// resyncs records the namespaces each Resync was given.
type resyncs struct {
	mu    sync.Mutex
	given [][]string
}

func (*resyncs) Drain(context.Context, func(string) bool) error { return nil }

func (r *resyncs) Resync(_ context.Context, namespaces []string, _, _ func(string) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.given = append(r.given, namespaces)
}

func (r *resyncs) last() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.given) == 0 {
		return nil
	}
	return r.given[len(r.given)-1]
}

// A namespace whose cache syncs between two steps is worked when it syncs,
// not at the next step: here steps are 20 s apart. The controllers are told
// to queue the objects of those namespaces alone.
func TestASyncedNamespaceIsWorkedBeforeTheNextStep(t *testing.T) {
	cs := fake.NewClientset()
	keys := namespaces(4)
	c := newTestCoordinator(t, cs.CoordinationV1().Leases("eso-system"), "a", keys, Config{LeaseDuration: 60 * time.Second, RenewDeadline: 50 * time.Second, RetryPeriod: 20 * time.Second})
	nc := &syncedOnCue{synced: map[string]bool{}, signal: make(chan struct{}, 1)}
	c.CacheWith(nc)
	w := &resyncs{}
	c.Register(w)
	// Two reads with the same members: the claim is cached from then on.
	for range 2 {
		if err := c.write(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		if err := c.step(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	runInBackground(t, c)
	time.Sleep(200 * time.Millisecond) // Start's first step is over
	if n := countWorked(c, keys); n != 0 {
		t.Fatalf("%d namespaces worked before they synced", n)
	}
	nc.sync(keys[0], keys[2])
	deadline := time.Now().Add(5 * time.Second)
	for !c.Works(keys[0]) || !c.Works(keys[2]) {
		if time.Now().After(deadline) {
			t.Fatalf("5 s after two namespaces synced, %d are worked", countWorked(c, keys))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if c.Works(keys[1]) || c.Works(keys[3]) {
		t.Errorf("namespaces worked that have not synced")
	}
	if got, want := w.last(), []string{keys[0], keys[2]}; !slices.Equal(got, want) {
		t.Errorf("the controllers were told to queue the objects of %q, want %q", got, want)
	}
}

// A namespace slow to sync holds a step up for a retry period at most, so
// the ring is read again on time (replicas that start together first claim
// everything, and must soon see each other).
func TestSyncingDoesNotHoldUpTheSteps(t *testing.T) {
	cs := fake.NewClientset()
	c := newTestCoordinator(t, cs.CoordinationV1().Leases("eso-system"), "a", namespaces(3), Config{LeaseDuration: 60 * time.Second, RenewDeadline: 50 * time.Second, RetryPeriod: time.Second})
	c.CacheWith(neverSynced{})
	if err := c.write(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := c.step(t.Context()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("a step waited %v for namespaces to sync; the retry period is 1 s", took.Round(time.Second))
	}
	if n := countWorked(c, namespaces(3)); n != 0 {
		t.Errorf("%d namespaces worked that never synced", n)
	}
}

// The fake clientset ignores delete preconditions; the API server does not,
// and collect relies on them: a Lease renewed after it was read is not
// deleted, whatever the read said.
func TestCollectSparesALeaseRenewedSinceRead(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("delete", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteAction)
		pre := d.GetDeleteOptions().Preconditions
		if pre == nil || pre.ResourceVersion == nil {
			return false, nil, nil
		}
		obj, err := cs.Tracker().Get(d.GetResource(), d.GetNamespace(), d.GetName())
		if err != nil {
			return false, nil, nil
		}
		if rv := obj.(metav1.Object).GetResourceVersion(); rv != *pre.ResourceVersion {
			return true, nil, apierrors.NewConflict(d.GetResource().GroupResource(), d.GetName(),
				fmt.Errorf("precondition: resourceVersion %s, object has %s", *pre.ResourceVersion, rv))
		}
		return false, nil, nil
	})
	leases := cs.CoordinationV1().Leases("eso-system")
	now := time.Now()
	// The fake assigns no resourceVersions: the test sets them, as the API
	// server would, through the tracker.
	read := memberLease("eso-system", "eso-core", "b", []string{"b"}, 15*time.Second, now.Add(-time.Minute))
	read.ResourceVersion = "1"
	if err := cs.Tracker().Add(read); err != nil {
		t.Fatal(err)
	}
	renewed := memberLease("eso-system", "eso-core", "b", []string{"b"}, 15*time.Second, now)
	renewed.ResourceVersion = "2"
	if err := cs.Tracker().Update(coordinationv1.SchemeGroupVersion.WithResource("leases"), renewed, "eso-system"); err != nil {
		t.Fatal(err)
	}

	c := newTestCoordinator(t, leases, "a", nil, Config{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second})
	// a read b's Lease a minute ago and has seen no renewal since.
	c.live.observe([]coordinationv1.Lease{*read}, now.Add(-time.Minute))
	c.read = map[string]coordinationv1.Lease{"b": *read}
	c.collect(t.Context())
	if _, err := leases.Get(t.Context(), "b", metav1.GetOptions{}); err != nil {
		t.Fatalf("b's Lease, renewed after it was read, was deleted: %v", err)
	}
}

func TestLeaseDurationRoundsUp(t *testing.T) {
	for d, want := range map[time.Duration]int32{15 * time.Second: 15, 15500 * time.Millisecond: 16, 300 * time.Millisecond: 1} {
		l := memberLease("eso-system", "eso-core", "a", nil, d, time.Now())
		if got := *l.Spec.LeaseDurationSeconds; got != want {
			t.Errorf("%v: Lease says %d s, want %d", d, got, want)
		}
	}
}

// A replica whose renewals reach the API server but fail here (their
// answers lost) is fenced, yet looks live to the others: after a Lease
// duration without a renewal it must stop renewing and leave, so its Lease
// expires and its share is taken over.
func TestRenewalsThatKeepFailingEndTheMember(t *testing.T) {
	cs := fake.NewClientset()
	var mu sync.Mutex
	landed := 0
	cs.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj := a.(k8stesting.UpdateAction).GetObject()
		if err := cs.Tracker().Update(a.GetResource(), obj, a.GetNamespace()); err != nil {
			return true, nil, err
		}
		mu.Lock()
		landed++
		mu.Unlock()
		return true, nil, errors.New("the answer was lost")
	})
	c := newTestCoordinator(t, cs.CoordinationV1().Leases("eso-system"), "a", namespaces(3), Config{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- c.Start(t.Context()) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Start returned without an error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("30 s of failed renewals and the member is still in the ring")
	}
	mu.Lock()
	before := landed
	mu.Unlock()
	if before == 0 {
		t.Fatal("no renewal reached the fake API server: the test cannot tell")
	}
	time.Sleep(time.Second)
	mu.Lock()
	defer mu.Unlock()
	if landed != before {
		t.Errorf("%d renewals landed after the member left", landed-before)
	}
}

// newTestCoordinator is member id of the ring eso-system/eso-core with
// cfg's durations, over the namespaces keys.
func newTestCoordinator(t *testing.T, leases coordinationclient.LeaseInterface, id string, keys []string, cfg Config) *Coordinator {
	t.Helper()
	cfg.Namespace, cfg.Ring, cfg.ID = "eso-system", "eso-core", id
	c, err := NewCoordinator(cfg, leases, func(context.Context) ([]string, error) { return keys, nil }, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
