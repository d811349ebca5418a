package sharding

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	dto "github.com/prometheus/client_model/go"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/eso-dev/eso/app/metrics"
)

// The ring is simulated: members share one Lease store (the fake
// clientset, linearizable like the API server) and one clock, and take
// turns; after every single step the test checks that no key is worked by
// two live members.

const (
	simLease = 15 * time.Second
	simRenew = 10 * time.Second
	simRetry = 2 * time.Second
)

// cutLeases fails every call while down: a member cut off from the API server.
type cutLeases struct {
	coordinationclient.LeaseInterface
	down atomic.Bool
	// noList fails only Lists: a member that renews but cannot read the
	// ring. noDelete fails only Deletes.
	noList, noDelete atomic.Bool
}

var errCut = errors.New("connection refused")

func (l *cutLeases) Create(ctx context.Context, o *coordinationv1.Lease, opts metav1.CreateOptions) (*coordinationv1.Lease, error) {
	if l.down.Load() {
		return nil, errCut
	}
	return l.LeaseInterface.Create(ctx, o, opts)
}

func (l *cutLeases) Update(ctx context.Context, o *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	if l.down.Load() {
		return nil, errCut
	}
	return l.LeaseInterface.Update(ctx, o, opts)
}

func (l *cutLeases) List(ctx context.Context, opts metav1.ListOptions) (*coordinationv1.LeaseList, error) {
	if l.down.Load() || l.noList.Load() {
		return nil, errCut
	}
	return l.LeaseInterface.List(ctx, opts)
}

func (l *cutLeases) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	if l.down.Load() || l.noDelete.Load() {
		return errCut
	}
	return l.LeaseInterface.Delete(ctx, name, opts)
}

type simMember struct {
	c      *Coordinator
	leases *cutLeases
	cache  *simCache
	dead   bool
}

// simCache is a NamespaceCache that records what it holds, and can fail.
// When it lags, a namespace added syncs only by the next call: the member
// works it from a widen or its next step.
type simCache struct {
	mu     sync.Mutex
	held   map[string]bool
	broken bool
	lag    bool
}

func (c *simCache) SetNamespaces(_ context.Context, namespaces []string) map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	held := map[string]bool{}
	synced := map[string]bool{}
	for _, ns := range namespaces {
		held[ns] = true
		if !c.broken && (!c.lag || c.held[ns]) {
			synced[ns] = true
		}
	}
	c.held = held
	return synced
}

func (c *simCache) NamespaceSynced() <-chan struct{} { return nil }

// Synced: by the time it is asked, every namespace held has synced.
func (c *simCache) Synced(namespaces []string) map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	synced := map[string]bool{}
	for _, ns := range namespaces {
		if c.held[ns] && !c.broken {
			synced[ns] = true
		}
	}
	return synced
}

func (c *simCache) holds(ns string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[ns]
}

// inRing reports whether the sim expects m to share the keys: alive,
// reachable, able to read the ring.
func (m *simMember) inRing() bool { return !m.dead && !m.leases.down.Load() && !m.leases.noList.Load() }

type sim struct {
	t       *testing.T
	ctx     context.Context
	cs      *fake.Clientset
	keys    []string
	mu      sync.Mutex
	now     time.Time
	members map[string]*simMember
	order   []string
	// releases counts calls of the members' OnRelease hooks, gains the
	// namespaces their OnGain hooks were told of.
	releases, gains atomic.Int32
}

func newSim(t *testing.T, keys int) *sim {
	s := &sim{t: t, ctx: t.Context(), cs: fake.NewClientset(), keys: namespaces(keys),
		now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), members: map[string]*simMember{}}
	for i := range 5 { // cluster-scoped names share the ring
		s.keys = append(s.keys, Key("", fmt.Sprintf("store-%d", i)))
	}
	return s
}

func (s *sim) clock() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

func (s *sim) advance(d time.Duration) {
	s.mu.Lock()
	s.now = s.now.Add(d)
	s.mu.Unlock()
	s.fenceLate()
	s.check()
}

// start has ids join and lets the ring settle.
func (s *sim) start(ids ...string) {
	for _, id := range ids {
		s.join(id)
	}
	s.settle(4 * simRetry)
}

func (s *sim) join(id string) {
	leases := &cutLeases{LeaseInterface: s.cs.CoordinationV1().Leases("eso-system")}
	c, err := NewCoordinator(Config{Namespace: "eso-system", Ring: "eso-core", ID: id,
		LeaseDuration: simLease, RenewDeadline: simRenew, RetryPeriod: simRetry},
		leases, func(context.Context) ([]string, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			return slices.Clone(s.keys), nil
		}, logr.Discard())
	if err != nil {
		s.t.Fatal(err)
	}
	c.now = s.clock
	c.renewedAt = s.clock()
	nc := &simCache{}
	c.CacheWith(nc)
	c.OnRelease(func(works func(string) bool) {
		// Called inside a move, before its claim is published, with what
		// the replica still works: nothing the new member list takes away.
		next := c.Assignment().Next
		if next == nil {
			s.t.Errorf("%s ran its release hooks outside a move", id)
		}
		for _, k := range s.keys {
			if works(k) && Owner(next, k) != id {
				s.t.Errorf("%s's release hooks were told it still works %s, which %v takes from it", id, k, next)
			}
		}
		s.releases.Add(1)
	})
	c.OnGain(func(namespaces []string) {
		// Called before the namespaces are worked.
		for _, ns := range namespaces {
			if c.Works(ns) {
				s.t.Errorf("%s was told of gaining %s after it started working it", id, ns)
			}
		}
		s.gains.Add(int32(len(namespaces)))
	})
	s.members[id] = &simMember{c: c, leases: leases, cache: nc}
	s.order = append(s.order, id)
}

// round lets every live member renew and read the ring once, checking
// after each step, then moves the clock on by a retry period.
func (s *sim) round() {
	for _, id := range s.order {
		m := s.members[id]
		if m.dead {
			continue
		}
		_ = m.c.write(s.ctx, nil)
		s.check()
		_ = m.c.step(s.ctx)
		s.check()
	}
	s.advance(simRetry)
}

// fenceLate is each member's watchdog: it fires at the renew deadline.
func (s *sim) fenceLate() {
	for _, m := range s.members {
		if !m.dead {
			m.c.fenceIfLate()
		}
	}
}

// check fails when a key is worked by two live members, or a namespace by
// a member whose cache does not hold it.
func (s *sim) check() {
	s.t.Helper()
	for _, k := range s.keys {
		var by []string
		for _, id := range s.order {
			if m := s.members[id]; !m.dead && m.c.Works(k) {
				by = append(by, id)
				if !strings.HasPrefix(k, "/") && !m.cache.holds(k) {
					s.t.Fatalf("at %s, %s works %s without caching it", s.clock().Format(time.TimeOnly), id, k)
				}
			}
		}
		if len(by) > 1 {
			s.t.Fatalf("at %s, %s is worked by %v", s.clock().Format(time.TimeOnly), k, by)
		}
	}
}

// settled reports whether every key is worked by its owner on the ring of
// the reachable live members, and by no other.
func (s *sim) settled() bool {
	var ring []string
	for id, m := range s.members {
		if m.inRing() {
			ring = append(ring, id)
		}
	}
	ring = Members(ring)
	for _, k := range s.keys {
		for id, m := range s.members {
			if !m.dead && m.c.Works(k) != (Owner(ring, k) == id) {
				return false
			}
		}
	}
	return true
}

// settle runs rounds until settled and returns how long that took.
func (s *sim) settle(within time.Duration) time.Duration {
	s.t.Helper()
	start := s.clock()
	for s.clock().Sub(start) <= within {
		s.round()
		if s.settled() {
			return s.clock().Sub(start)
		}
	}
	s.t.Fatalf("not settled within %v", within)
	return 0
}

func (s *sim) owned(id string) int {
	n := 0
	for _, k := range s.keys {
		if s.members[id].c.Works(k) {
			n++
		}
	}
	return n
}

func TestRingHandovers(t *testing.T) {
	tests := []struct {
		name string
		run  func(s *sim)
	}{
		{"members join one at a time and split the keys", func(s *sim) {
			s.join("a")
			s.settle(3 * simRetry)
			if s.owned("a") != len(s.keys) {
				t.Fatalf("alone, a works %d of %d keys", s.owned("a"), len(s.keys))
			}
			if n := s.gains.Load(); n != 0 {
				t.Fatalf("alone, a was told it took %d namespaces over", n)
			}
			s.join("b")
			s.settle(3 * simRetry)
			s.join("c")
			s.settle(3 * simRetry)
			if s.releases.Load() == 0 || s.gains.Load() == 0 {
				t.Errorf("members moved keys but the hooks ran %d releases and told of %d gains", s.releases.Load(), s.gains.Load())
			}
			for _, id := range []string{"a", "b", "c"} {
				if n := s.owned(id); n < 70 || n > 140 {
					t.Errorf("%s works %d of %d keys, want about a third", id, n, len(s.keys))
				}
			}
		}},
		{"a member whose cache cannot follow its claim works nothing new until it can", func(s *sim) {
			s.join("a")
			s.settle(3 * simRetry)
			s.join("b")
			s.members["b"].cache.broken = true
			for range 4 {
				s.round()
			}
			for _, k := range s.keys {
				if !strings.HasPrefix(k, "/") && s.members["b"].c.Works(k) {
					t.Fatalf("b works namespace %s its cache has not synced", k)
				}
			}
			s.members["b"].cache.mu.Lock()
			s.members["b"].cache.broken = false
			s.members["b"].cache.mu.Unlock()
			s.settle(4 * simRetry)
			if n := s.owned("b"); n == 0 {
				t.Fatal("b works nothing once its cache follows")
			}
		}},
		{"a namespace created between steps is worked once cached", func(s *sim) {
			s.join("a")
			s.join("b")
			s.settle(4 * simRetry)
			s.mu.Lock()
			s.keys = append(s.keys, "created-late")
			s.mu.Unlock()
			s.check() // works it nowhere: no cache holds it yet
			s.settle(3 * simRetry)
		}},
		{"a killed member's keys are taken once its Lease expires", func(s *sim) {
			s.start("a", "b", "c")
			s.members["b"].dead = true
			took := s.settle(simLease + 3*simRetry)
			if took < simLease-simRetry {
				t.Fatalf("b's keys were taken after %v, before its Lease could expire", took)
			}
		}},
		{"a killed member's Lease is deleted once expired, so a later joiner need not wait for it", func(s *sim) {
			s.start("a", "b", "c")
			s.members["b"].dead = true
			s.settle(simLease + 3*simRetry)
			if _, err := s.cs.CoordinationV1().Leases("eso-system").Get(s.ctx, "b", metav1.GetOptions{}); err == nil {
				s.t.Fatal("b's Lease is still there after its keys were taken over")
			}
			// A joiner counts every Lease it sees for the first time as
			// just renewed: had b's stayed, d would wait a Lease duration.
			s.join("d")
			if took := s.settle(simLease); took > 3*simRetry {
				s.t.Fatalf("d's share was worked after %v", took)
			}
		}},
		{"members starting together never cache much more than their share", func(s *sim) {
			s.join("a")
			s.join("b")
			s.join("c")
			namespaces := 0
			for _, k := range s.keys {
				if !strings.HasPrefix(k, "/") {
					namespaces++
				}
			}
			for range 6 {
				s.round()
				for _, id := range s.order {
					c := s.members[id].cache
					c.mu.Lock()
					held := len(c.held)
					c.mu.Unlock()
					if held > namespaces/2 {
						s.t.Fatalf("at %s, %s caches %d of %d namespaces", s.clock().Format(time.TimeOnly), id, held, namespaces)
					}
				}
			}
			s.settle(4 * simRetry)
		}},
		{"a member leaving hands over at once", func(s *sim) {
			s.start("a", "b", "c")
			s.members["c"].c.leave()
			s.members["c"].dead = true
			s.check()
			if took := s.settle(3 * simRetry); took > 2*simRetry {
				t.Fatalf("c's keys were taken after %v", took)
			}
		}},
		{"a member that misses its renewals stops before others take over, and comes back", func(s *sim) {
			s.start("a", "b", "c")
			s.members["a"].leases.down.Store(true)
			for s.clock().Sub(s.members["a"].c.renewedAt) < simRenew {
				s.round()
			}
			if s.owned("a") != 0 {
				t.Fatalf("a still works %d keys past its renew deadline", s.owned("a"))
			}
			s.settle(simLease + 3*simRetry)
			s.members["a"].leases.down.Store(false)
			s.settle(4 * simRetry)
			if s.owned("a") == 0 {
				t.Fatal("a came back but works nothing")
			}
		}},
		{"a member that renews but cannot read the ring is no member", func(s *sim) {
			for _, id := range []string{"a", "b"} {
				s.join(id)
			}
			s.join("blind")
			s.members["blind"].leases.noList.Store(true)
			s.settle(4 * simRetry)
		}},
		{"a killed member whose Lease cannot be deleted stays gone", func(s *sim) {
			s.start("a", "b", "c")
			s.members["c"].dead = true
			for _, m := range s.members {
				m.leases.noDelete.Store(true)
			}
			s.settle(simLease + 3*simRetry)
			s.advance(forgetAfter + time.Minute)
			for range 3 {
				s.round()
				if !s.settled() {
					t.Fatal("c's Lease, still listed, counts again after an hour")
				}
			}
		}},
		{"scale 3 → 4 → 2", func(s *sim) {
			s.start("a", "b", "c")
			s.join("d")
			s.settle(4 * simRetry)
			s.members["a"].c.leave()
			s.members["a"].dead = true
			s.members["b"].dead = true // killed
			s.settle(simLease + 3*simRetry)
			if s.owned("c")+s.owned("d") != len(s.keys) {
				t.Fatal("c and d do not work every key")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSim(t, 300)
			tt.run(s)
		})
	}
}

// TestRingNeverDoubleWorks drives members through random joins, leaves,
// kills, cuts and heals, in random order, and checks after every step.
func TestRingNeverDoubleWorks(t *testing.T) {
	for seed := range uint64(10) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, 7))
			s := newSim(t, 60)
			next := 0
			for range 120 {
				var live []string
				for _, id := range s.order {
					if !s.members[id].dead {
						live = append(live, id)
					}
				}
				switch op := r.IntN(10); {
				case op == 0 || len(live) == 0:
					s.join(fmt.Sprintf("m%d", next))
					next++
				case op == 1 && len(live) > 1:
					m := s.members[live[r.IntN(len(live))]]
					m.c.leave()
					m.dead = true
				case op == 2 && len(live) > 1:
					s.members[live[r.IntN(len(live))]].dead = true
				case op == 3:
					m := s.members[live[r.IntN(len(live))]]
					m.leases.down.Store(!m.leases.down.Load())
				case op == 4:
					m := s.members[live[r.IntN(len(live))]]
					m.cache.lag = !m.cache.lag
				}
				// Members act in a random order, some more than once.
				order := slices.Clone(s.order)
				r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				for _, id := range order {
					m := s.members[id]
					if m.dead {
						continue
					}
					if r.IntN(3) > 0 {
						_ = m.c.write(s.ctx, nil)
						s.check()
					}
					if r.IntN(3) > 0 {
						_ = m.c.step(s.ctx)
						s.check()
					}
					if r.IntN(3) == 0 {
						m.c.widen(s.ctx)
						s.check()
					}
				}
				s.advance(time.Duration(r.IntN(3)) * simRetry)
			}
			for _, m := range s.members {
				m.leases.down.Store(false)
			}
			s.settle(simLease + 4*simRetry)
		})
	}
}

// stuckWorker never finishes a reconcile of anything it is asked to drain.
type stuckWorker struct{}

func (stuckWorker) Drain(ctx context.Context, _ func(string) bool) error {
	<-ctx.Done()
	return ctx.Err()
}

func (stuckWorker) Resync(context.Context, []string, func(string) bool, func(string) bool) {}

func TestAStuckReleaseEndsTheMember(t *testing.T) {
	s := newSim(t, 30)
	s.join("a")
	s.settle(3 * simRetry)
	a := s.members["a"].c
	a.moveWait = 50 * time.Millisecond
	a.Register(stuckWorker{})
	s.join("b")
	_ = s.members["b"].c.write(s.ctx, nil)
	_ = s.members["b"].c.step(s.ctx)
	_ = s.members["b"].c.write(s.ctx, nil) // b's Lease now names b
	if err := a.step(s.ctx); !errors.Is(err, errDrain) {
		t.Fatalf("a's step: %v, want the drain's error", err)
	}
}

// unworkedObservations is how many handovers eso_shard_handover_unworked_seconds
// has observed so far.
func unworkedObservations(t *testing.T) uint64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.ShardUnworked.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

// Each namespace gained from another member counts in the unworked-time
// metric, also when its cache synced only steps after the handover, when
// the read that showed its previous worker is long past. Not parallel: the
// metric is the process's.
func TestUnworkedCountsNamespacesThatSyncLate(t *testing.T) {
	s := newSim(t, 60)
	s.join("a")
	s.settle(3 * simRetry)
	before := unworkedObservations(t)
	s.join("b")
	s.members["b"].cache.lag = true
	s.settle(6 * simRetry)
	// The sim's list of namespaces holds its cluster-scoped keys too.
	if gained, got := s.owned("b"), unworkedObservations(t)-before; gained == 0 || got != uint64(gained) {
		t.Errorf("b gained %d keys from a; the unworked time was observed %d times", gained, got)
	}
}
