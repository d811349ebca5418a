package sharding

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/eso-dev/eso/app/metrics"
)

// Config is one replica's place in a ring.
type Config struct {
	// Namespace holds the member Leases (eso's own namespace).
	Namespace string
	// Ring names the ring (LabelRing's value).
	Ring string
	// ID is this replica's member ID and Lease name: unique per process.
	ID string
	// LeaseDuration is how long other members wait for a renewal before
	// they take this replica's namespaces; RenewDeadline, shorter, is how
	// long this replica keeps working without a renewal; RetryPeriod is
	// how often it renews and reads the ring.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Validate checks the durations' order: a replica must stop before others
// may judge it gone.
func (c Config) Validate() error {
	if c.Namespace == "" || c.Ring == "" || c.ID == "" {
		return errors.New("sharding needs a namespace, a ring name and a member ID")
	}
	if c.RetryPeriod <= 0 || c.RenewDeadline <= c.RetryPeriod || c.LeaseDuration <= c.RenewDeadline {
		return fmt.Errorf("sharding needs retry period (%v) < renew deadline (%v) < lease duration (%v)",
			c.RetryPeriod, c.RenewDeadline, c.LeaseDuration)
	}
	return nil
}

// Worker is a controller's work queue as the coordinator drives it.
type Worker interface {
	// Drain returns once no reconcile of a key works rejects is running.
	Drain(ctx context.Context, works func(key string) bool) error
	// Resync queues the controller's objects whose key before rejects and
	// after accepts: what this replica just gained. namespaces, when not
	// nil, are the only namespaces gained, and no cluster-scoped key is.
	Resync(ctx context.Context, namespaces []string, before, after func(key string) bool)
}

// NamespaceCache keeps the objects of the namespaces a replica's claim
// gives it (app/shardcache): the coordinator sets them before it works any
// of them, and drops a namespace only after its work was given up.
type NamespaceCache interface {
	// SetNamespaces makes namespaces exactly the ones cached, waiting for
	// them to sync until ctx ends, and returns those that have synced.
	SetNamespaces(ctx context.Context, namespaces []string) map[string]bool
	// NamespaceSynced receives when namespaces being added have synced
	// since it last did, so the replica works them without waiting for
	// its next step.
	NamespaceSynced() <-chan struct{}
	// Synced returns those of namespaces that are cached and have synced,
	// changing nothing and waiting for nothing.
	Synced(namespaces []string) map[string]bool
}

const (
	// moveWait bounds how long a replica waits for its reconciles of the
	// namespaces it gives up (each is bounded to a minute). Past it the
	// replica stops with an error: its Lease expires, its writes are
	// refused (WriteGuard), and a restart brings it back clean.
	moveWait = 70 * time.Second
	// leaveWait bounds the same wait when the replica stops, inside the
	// manager's 30 s graceful shutdown; past it the Lease is left to expire.
	leaveWait = 20 * time.Second
)

// Coordinator keeps this replica's Lease, reads the ring and decides what
// the replica works (Works). It is a manager runnable that runs on every
// replica.
type Coordinator struct {
	cfg        Config
	leases     coordinationclient.LeaseInterface
	namespaces func(context.Context) ([]string, error)
	log        logr.Logger
	now        func() time.Time
	moveWait   time.Duration

	// assignment is read on every queued request; never nil.
	assignment atomic.Pointer[Assignment]

	// writeMu serialises this replica's Lease writes, so a renewal never
	// puts back a claim a newer write replaced.
	writeMu sync.Mutex
	written *coordinationv1.Lease

	// mu guards the fields below. A fence only takes mu, so a write
	// hanging on the API server cannot delay it.
	mu    sync.Mutex
	claim []string
	// fences counts fences; wroteAfter is its value at the last
	// successful write. An assignment may be made only from a read
	// that followed a write made after the last fence.
	fences, wroteAfter uint64
	fenced             bool
	// renewedAt is when the last successful write was sent.
	renewedAt time.Time
	// wrote: the Lease has been written at least once.
	wrote    bool
	watchdog *time.Timer

	workersMu sync.Mutex
	workers   []Worker
	// cache, if set, follows the claim (see NamespaceCache); set before Start.
	cache NamespaceCache
	// released are called once work was given up (see OnRelease), gained
	// before namespaces are worked (see OnGain).
	released []func(works func(key string) bool)
	gained   []func(namespaces []string)

	// journal is the record of the namespaces this replica works, logged at
	// debug level as it starts and stops working each (see record).
	journalMu sync.Mutex
	journal   map[string]bool

	// live and the fields below belong to the goroutine running steps.
	live liveness
	// caching: the cache follows the claim, which it does once two reads
	// in a row gave firstMembers.
	caching      bool
	firstMembers []string
	// read is the latest read of the member Leases, by member ID.
	read map[string]coordinationv1.Lease
	// listed are the cluster's namespaces at the last step, and cached
	// those of them the cache was given: what widen works from.
	listed, cached []string
	// widenedAt is when widen last ran.
	widenedAt time.Time
	// worked is, by namespace, whether this replica worked it at the last
	// count; waiting how many waited for another's release.
	worked  map[string]bool
	waiting int
	// unworkedFrom is, for each namespace gained from another member and
	// not worked yet, when that member stopped working it.
	unworkedFrom map[string]time.Time
}

// NewCoordinator returns the coordinator of cfg's member, writing its Lease
// through leases. namespaces lists the cluster's namespaces, for the
// metrics of what this replica works.
func NewCoordinator(cfg Config, leases coordinationclient.LeaseInterface, namespaces func(context.Context) ([]string, error), log logr.Logger) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Coordinator{cfg: cfg, leases: leases, namespaces: namespaces, log: log, now: time.Now, claim: []string{}, moveWait: moveWait}
	c.assignment.Store(&Assignment{})
	return c, nil
}

// ID is this replica's member ID.
func (c *Coordinator) ID() string { return c.cfg.ID }

// Works reports whether this replica may work key (see Key) now.
func (c *Coordinator) Works(key string) bool { return c.assignment.Load().Works(key) }

// Assignment is what this replica may work now.
func (c *Coordinator) Assignment() *Assignment { return c.assignment.Load() }

// Register adds a worker: it is drained before this replica gives work up
// and resynced when it gains some.
func (c *Coordinator) Register(w Worker) {
	c.workersMu.Lock()
	defer c.workersMu.Unlock()
	c.workers = append(c.workers, w)
}

// CacheWith makes nc cache the namespaces this replica's claim gives it.
// Call it before Start.
func (c *Coordinator) CacheWith(nc NamespaceCache) { c.cache = nc }

// OnRelease registers f, called after this replica gave work up with what
// it still works: to drop what it kept per object of the keys it released
// (its metrics series, its memory of their syncs), which their new owner
// keeps from then on. Call it before Start.
func (c *Coordinator) OnRelease(f func(works func(key string) bool)) {
	c.workersMu.Lock()
	defer c.workersMu.Unlock()
	c.released = append(c.released, f)
}

// OnGain registers f, called with the namespaces this replica is about to
// start working, before it does, when another member may have worked them
// (not when the replica is alone in the ring). f must not block. Call it
// before Start.
func (c *Coordinator) OnGain(f func(namespaces []string)) {
	c.workersMu.Lock()
	defer c.workersMu.Unlock()
	c.gained = append(c.gained, f)
}

// NeedLeaderElection: every replica is a member.
func (c *Coordinator) NeedLeaderElection() bool { return false }

// Start renews this replica's Lease and follows the ring until ctx ends,
// then gives all work up and deletes the Lease.
func (c *Coordinator) Start(ctx context.Context) error {
	c.mu.Lock()
	c.renewedAt = c.now()
	c.watchdog = time.AfterFunc(c.cfg.RenewDeadline, c.fenceIfLate)
	c.mu.Unlock()
	renewed, gaveUp := make(chan struct{}, 1), make(chan error, 1)
	rctx, stopRenewing := context.WithCancel(ctx)
	defer stopRenewing()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := c.renewLoop(rctx, renewed); err != nil {
			gaveUp <- err
		}
	}()
	// quit leaves the ring by letting the Lease expire: no renewal, no work.
	quit := func(err error) error {
		stopRenewing()
		wg.Wait()
		c.mu.Lock()
		c.fenced = true
		c.fences++
		c.assignment.Store(&Assignment{})
		c.mu.Unlock()
		c.log.Error(err, "leaving the shard ring; the Lease is left to expire")
		return err
	}
	// A step follows each renewal: the read that decides what to work
	// always comes after a write of the claim. One also comes when a live
	// member's Lease expires unrenewed, so its namespaces are taken over
	// then rather than up to a retry period later.
	expiring := time.NewTimer(time.Hour)
	expiring.Stop()
	defer expiring.Stop()
	// Namespaces whose caches synced between steps are worked at once
	// (widen), at most every widenEvery: each widen lists the objects
	// gained, and hundreds of namespaces may sync in a second.
	var synced <-chan struct{}
	if c.cache != nil {
		synced = c.cache.NamespaceSynced()
	}
	widening := time.NewTimer(time.Hour)
	widening.Stop()
	defer widening.Stop()
	widenDue := false
	lastRead := c.now()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			c.leave()
			return nil
		case <-renewed:
		case <-expiring.C:
		case err := <-gaveUp:
			return quit(err)
		case <-synced:
			if !widenDue {
				widenDue = true
				widening.Reset(max(c.widenedAt.Add(widenEvery).Sub(c.now()), 0))
			}
			continue
		case <-widening.C:
			widenDue = false
			c.widen(ctx)
			continue
		}
		err := c.step(ctx)
		// Armed from a successful read only: after a failed one the first
		// expiry may be past, and the renewals pace the retries.
		if at := c.live.firstExpiry; err == nil && at.After(c.now()) {
			expiring.Reset(at.Sub(c.now()) + time.Millisecond)
		}
		switch {
		case err == nil:
			lastRead = c.now()
		case errors.Is(err, errDrain):
			return quit(err)
		case ctx.Err() == nil:
			c.log.V(1).Info("reading the ring failed; trying again", "error", err.Error())
			// A member that renews but cannot read the ring would keep its
			// share unworked: it leaves, and comes back on a restart.
			if c.now().Sub(lastRead) > c.cfg.LeaseDuration {
				return quit(fmt.Errorf("could not read the shard ring for %v: %w", c.cfg.LeaseDuration, err))
			}
		}
	}
}

// errDrain: reconciles of namespaces being given up did not end in time.
var errDrain = errors.New("reconciles of the namespaces given up did not finish")

// renewLoop renews the Lease with the current claim every RetryPeriod
// until ctx ends, or until no renewal has succeeded for a Lease duration:
// then it stops and says why. A renewal can reach the API server and still
// fail here (its answer lost or late); renewing on, this fenced replica
// would look live to the others, and its share would stay unworked.
func (c *Coordinator) renewLoop(ctx context.Context, renewed chan<- struct{}) error {
	for {
		err := c.write(ctx, nil)
		if err == nil {
			select {
			case renewed <- struct{}{}:
			default:
			}
		} else if ctx.Err() == nil {
			c.log.Info("renewing the shard Lease failed", "lease", c.cfg.Namespace+"/"+c.cfg.ID, "error", err.Error())
			c.mu.Lock()
			since := c.now().Sub(c.renewedAt)
			c.mu.Unlock()
			if since > c.cfg.LeaseDuration {
				return fmt.Errorf("could not renew the shard Lease for %v: %w", since.Round(time.Second), err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(c.cfg.RetryPeriod):
		}
	}
}

// write renews the Lease, publishing claim (nil: the current one). On
// success claim becomes current and the fence deadline moves to
// RenewDeadline after the write was sent.
func (c *Coordinator) write(ctx context.Context, claim []string) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	if claim == nil {
		claim = c.claim
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RetryPeriod)
	defer cancel()
	sent := c.now()
	l := memberLease(c.cfg.Namespace, c.cfg.Ring, c.cfg.ID, claim, c.cfg.LeaseDuration, sent)
	out, err := c.put(ctx, l)
	if err != nil {
		return err
	}
	c.written = out
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now().Sub(sent) >= c.cfg.RenewDeadline {
		// Written, but too late to count: others may already have judged
		// this replica gone. The next renewal counts.
		return errors.New("the shard Lease renewal completed past the renew deadline")
	}
	c.claim, c.wrote = claim, true
	c.wroteAfter = c.fences
	c.fenced = false
	c.renewedAt = sent
	if c.watchdog != nil {
		c.watchdog.Reset(c.cfg.RenewDeadline - c.now().Sub(sent))
	}
	return nil
}

// put creates or updates this replica's Lease as l. The Lease is this
// replica's alone (its name carries 32 random bits, so two processes never
// share one): on a conflict it writes over whatever is there.
func (c *Coordinator) put(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	if c.written == nil {
		out, err := c.leases.Create(ctx, l, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			return out, err
		}
	} else {
		l.ResourceVersion, l.Spec.AcquireTime = c.written.ResourceVersion, c.written.Spec.AcquireTime
		out, err := c.leases.Update(ctx, l, metav1.UpdateOptions{})
		switch {
		case apierrors.IsNotFound(err): // removed while this replica could not renew
			l.ResourceVersion = ""
			return c.leases.Create(ctx, l, metav1.CreateOptions{})
		case !apierrors.IsConflict(err):
			return out, err
		}
	}
	current, err := c.leases.Get(ctx, l.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	l.ResourceVersion = current.ResourceVersion
	return c.leases.Update(ctx, l, metav1.UpdateOptions{})
}

// fenceIfLate stops all work when the Lease was not renewed within
// RenewDeadline: others may soon judge this replica gone and take its
// namespaces. The watchdog calls it at that deadline.
func (c *Coordinator) fenceIfLate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fenced || c.now().Sub(c.renewedAt) < c.cfg.RenewDeadline {
		return
	}
	c.fenced = true
	c.fences++
	c.assignment.Store(&Assignment{})
	c.recordStops(nil)
	metrics.ShardFences.Inc()
	metrics.ShardNamespaces.Set(0)
	c.log.Info("shard Lease not renewed in time: stopped all work until it is", "renewDeadline", c.cfg.RenewDeadline.String())
}

// step reads the ring once: it moves to a new member list when the live
// members changed (releasing first) and otherwise works what its claim
// gives it and no other live member claims.
func (c *Coordinator) step(ctx context.Context) error {
	members, others, fences, err := c.readRing(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	claim := c.claim
	c.mu.Unlock()
	if !slices.Equal(members, claim) {
		if err := c.move(ctx, members, fences); err != nil {
			return err
		}
		if members, others, fences, err = c.readRing(ctx); err != nil {
			return err
		}
		c.mu.Lock()
		claim = c.claim
		c.mu.Unlock()
	}
	c.apply(ctx, &Assignment{Self: c.cfg.ID, Claim: claim, Others: others}, fences)
	c.collect(ctx)
	return nil
}

// readRing lists the member Leases (a consistent read: the API server
// serves it at etcd's current revision) and returns the live members,
// including this one, and the claims of the others. A Lease counts as a
// member once its claim names its holder, that is once the holder has read
// the ring itself. It reads only after a write made since the last fence.
func (c *Coordinator) readRing(ctx context.Context) (members []string, others map[string][]string, fences uint64, err error) {
	c.mu.Lock()
	fences, ready := c.fences, !c.fenced && c.wroteAfter == c.fences && c.wrote
	c.mu.Unlock()
	if !ready {
		return nil, nil, 0, errors.New("waiting for this replica's Lease to be written")
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RetryPeriod)
	defer cancel()
	list, err := c.leases.List(ctx, metav1.ListOptions{LabelSelector: labels.Set{LabelRing: c.cfg.Ring}.String()})
	if err != nil {
		return nil, nil, 0, err
	}
	live := c.live.observe(list.Items, c.now())
	c.read = make(map[string]coordinationv1.Lease, len(list.Items))
	for _, l := range list.Items {
		c.read[l.Name] = l
	}
	others = map[string][]string{}
	members = []string{c.cfg.ID}
	for _, l := range live {
		if l.Name == c.cfg.ID {
			continue
		}
		claim := claimOf(&l)
		others[l.Name] = claim
		if slices.Contains(claim, l.Name) {
			members = append(members, l.Name)
		}
	}
	return Members(members), others, fences, nil
}

// move gives up what members takes from this replica, waits until its
// reconciles of those keys are done, then publishes members as its claim.
func (c *Coordinator) move(ctx context.Context, members []string, fences uint64) error {
	c.mu.Lock()
	if c.fenced || c.fences != fences {
		c.mu.Unlock()
		return errors.New("fenced while moving")
	}
	moving := c.assignment.Load().moving(members)
	c.assignment.Store(moving)
	c.mu.Unlock()
	dctx, cancel := context.WithTimeout(ctx, c.moveWait)
	defer cancel()
	if err := c.drain(dctx, moving.Works); err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("%w within %v: %w", errDrain, c.moveWait, err)
	}
	c.recordStops(moving.Works)
	c.workersMu.Lock()
	released := slices.Clone(c.released)
	c.workersMu.Unlock()
	for _, f := range released {
		f(moving.Works)
	}
	c.log.Info("publishing a new shard claim", "members", members)
	return c.write(ctx, members)
}

// drain waits for every worker's reconciles of keys works rejects.
func (c *Coordinator) drain(ctx context.Context, works func(string) bool) error {
	c.workersMu.Lock()
	workers := slices.Clone(c.workers)
	c.workersMu.Unlock()
	for _, w := range workers {
		if err := w.Drain(ctx, works); err != nil {
			return err
		}
	}
	return nil
}

// apply makes next the assignment, unless a fence came since the read it
// was made from, queues what it gains and counts what it works.
func (c *Coordinator) apply(ctx context.Context, next *Assignment, fences uint64) {
	// One list of namespaces serves the cache, the journal and the count.
	namespaces, listErr := c.namespaces(ctx)
	if c.cache != nil {
		// The cache holds the namespaces the claim gives this replica; it
		// works those that have synced. Without the list of namespaces the
		// assignment stays as it is.
		if listErr != nil {
			c.log.Info("listing namespaces failed; the shard assignment waits", "error", listErr.Error())
			return
		}
		// Bounded by claimWait: the namespaces synced by then are worked
		// from this step, the others from a widen as each syncs, so a
		// namespace slow to sync holds up neither the rest nor the next
		// read of the ring. Replicas starting together each claim
		// every namespace at first (none has yet seen the others claim);
		// each must see the others within seconds and stop caching what
		// is theirs, not go on listing it for a Lease duration.
		claim := claimed(namespaces, next)
		if !c.caching {
			// Nor does a replica just started cache anything before two
			// reads in a row gave it the same members: the first of
			// replicas starting together would list every namespace.
			if c.caching = slices.Equal(c.firstMembers, next.Claim); !c.caching {
				c.firstMembers = slices.Clone(next.Claim)
				claim = nil
			}
		}
		cctx, cancel := context.WithTimeout(ctx, min(claimWait, c.cfg.RetryPeriod))
		next.Cached = c.cache.SetNamespaces(cctx, claim)
		cancel()
		c.listed, c.cached = namespaces, claim
		if len(next.Cached) < len(claim) {
			c.log.V(1).Info("claimed namespaces still syncing", "syncing", len(claim)-len(next.Cached))
		}
	}
	c.mu.Lock()
	if c.fenced || c.fences != fences {
		c.mu.Unlock()
		return
	}
	// Told before the swap, under mu, so no fence comes between: the
	// hooks only record, they never block.
	c.gain(namespaces, c.assignment.Load(), next)
	c.recordStarts(namespaces, next)
	prev := c.assignment.Swap(next)
	c.mu.Unlock()
	if prev.Self != next.Self || !slices.Equal(prev.Claim, next.Claim) || prev.Next != nil || !sameClaims(prev.Others, next.Others) ||
		!maps.Equal(prev.Cached, next.Cached) {
		c.resync(ctx, nil, prev.Works, next.Works)
	}
	if listErr != nil {
		c.log.Info("listing namespaces for the shard metrics failed", "error", listErr.Error())
		return
	}
	c.count(namespaces, prev, next)
}

// widenEvery is the least time between two widens.
const widenEvery = 250 * time.Millisecond

// claimWait bounds how long a step waits for the namespaces it starts
// caching to sync. Waiting longer only delays the ones that have: a
// thousand namespaces claimed at a replica's start sync over seconds, and
// are worked as they do (widen).
const claimWait = widenEvery

// widen works the namespaces given to the cache at the last step that have
// synced since, without waiting for the next step. It changes nothing
// else: the claims are those of the last read, which already gave this
// replica those namespaces; only their caches were not ready. A fence or a
// move since (the assignment replaced or restricted) leaves it to the next
// step.
func (c *Coordinator) widen(ctx context.Context) {
	c.widenedAt = c.now()
	cur := c.assignment.Load()
	if cur.Cached == nil || cur.Next != nil || len(cur.Cached) == len(c.cached) {
		return
	}
	// A widen only adds: a namespace that no longer reports synced (a
	// handler added since) is left to the next step.
	var gained []string
	for ns := range c.cache.Synced(c.cached) {
		if !cur.Cached[ns] {
			gained = append(gained, ns)
		}
	}
	if len(gained) == 0 {
		return
	}
	slices.Sort(gained)
	c.mu.Lock()
	if c.fenced || c.assignment.Load() != cur {
		c.mu.Unlock()
		return
	}
	next := *cur
	next.Cached = maps.Clone(cur.Cached)
	for _, ns := range gained {
		next.Cached[ns] = true
	}
	c.gain(c.listed, cur, &next)
	c.recordStarts(c.listed, &next)
	c.assignment.Store(&next)
	c.mu.Unlock()
	// Only namespaces were gained: the workers list those alone, so a
	// widen costs what it gains, not all this replica works.
	c.resync(ctx, gained, cur.Works, next.Works)
	c.count(c.listed, cur, &next)
}

// resync has every worker queue what after gains over before (see
// Worker.Resync).
func (c *Coordinator) resync(ctx context.Context, namespaces []string, before, after func(string) bool) {
	c.workersMu.Lock()
	workers := slices.Clone(c.workers)
	c.workersMu.Unlock()
	for _, w := range workers {
		w.Resync(ctx, namespaces, before, after)
	}
}

// gain tells the OnGain hooks the namespaces next works that cur does not
// and that another member may have worked: a lone replica starting takes
// nothing over.
func (c *Coordinator) gain(namespaces []string, cur, next *Assignment) {
	c.workersMu.Lock()
	hooks := slices.Clone(c.gained)
	c.workersMu.Unlock()
	if len(hooks) == 0 || (len(next.Claim) < 2 && len(c.read) < 2) {
		return
	}
	var gained []string
	for _, ns := range namespaces {
		if next.Works(ns) && !cur.Works(ns) {
			gained = append(gained, ns)
		}
	}
	if len(gained) == 0 {
		return
	}
	for _, f := range hooks {
		f(gained)
	}
}

// claimed are the namespaces next's claim gives its replica, worked now or
// once their previous owner released them.
func claimed(namespaces []string, next *Assignment) []string {
	var out []string
	for _, ns := range namespaces {
		if Owner(next.Claim, ns) == next.Self {
			out = append(out, ns)
		}
	}
	return out
}

// count updates the metrics of what this replica works, at every step so
// that new namespaces count too, and logs what it gained and released.
// A namespace new since the last count is not a handover.
func (c *Coordinator) count(namespaces []string, prev, next *Assignment) {
	metrics.ShardMembers.Set(float64(len(next.Claim)))
	now := c.now()
	var gained, released, waiting int
	worked := make(map[string]bool, len(namespaces))
	// Rebuilt like worked, so a namespace deleted while pending leaves it.
	unworkedFrom := map[string]time.Time{}
	for _, ns := range namespaces {
		is := next.Works(ns)
		was, known := c.worked[ns]
		// A namespace claimed may be worked steps after its previous
		// worker stopped (its cache still syncing): by then prev no longer
		// shows that worker, so when it stopped is kept from the reads
		// that did.
		pending, gainedNow := !is && Owner(next.Claim, ns) == next.Self, known && is && !was
		since, handedOver := time.Time{}, false
		if pending || gainedNow {
			if since, handedOver = c.unworkedSince(prev, ns); !handedOver {
				since, handedOver = c.unworkedFrom[ns]
			}
		}
		switch {
		case gainedNow:
			gained++
			if handedOver {
				metrics.ShardUnworked.Observe(max(now.Sub(since), 0).Seconds())
			}
		case known && was && !is:
			released++
		}
		if pending && handedOver {
			unworkedFrom[ns] = since
		}
		if is {
			worked[ns] = true
		} else {
			worked[ns] = false
			if next.Blocked(ns) {
				waiting++
			}
		}
	}
	owned := 0
	for _, w := range worked {
		if w {
			owned++
		}
	}
	metrics.ShardNamespaces.Set(float64(owned))
	if c.worked == nil || gained > 0 || released > 0 || waiting != c.waiting {
		metrics.ShardHandovers.WithLabelValues("gained").Add(float64(gained))
		metrics.ShardHandovers.WithLabelValues("released").Add(float64(released))
		c.log.Info("shard assignment", "members", next.Claim, "namespaces", owned, "gained", gained, "released", released, "waitingForRelease", waiting)
	}
	c.worked, c.waiting, c.unworkedFrom = worked, waiting, unworkedFrom
}

// unworkedSince is when the member that worked ns before this replica
// stopped, on this replica's clock. False when ns had no other worker.
func (c *Coordinator) unworkedSince(prev *Assignment, ns string) (time.Time, bool) {
	previous := ""
	for id, claim := range prev.Others {
		if Owner(claim, ns) == id {
			previous = id
		}
	}
	if previous == "" {
		if o := Owner(prev.Claim, ns); o != "" && o != c.cfg.ID {
			previous = o
		}
	}
	if previous == "" {
		return time.Time{}, false
	}
	// When this replica saw the previous worker's last renewal: the one
	// carrying its release, or its last before it went.
	return c.live.lastRenewal(previous)
}

// collect deletes the Leases of members gone (a lease duration past the
// renewal this replica last saw), so a ring of restarted Pods does not keep
// their Leases, and a replica joining later does not count a dead member
// as live for a lease duration, as it must count every Lease it sees for
// the first time. Deleting is safe: the member, if it still runs, fenced
// itself at its renew deadline, before anyone could judge it gone; if it
// comes back it creates its Lease again. The delete is conditional on the
// Lease read, so a renewal since keeps it.
func (c *Coordinator) collect(ctx context.Context) {
	now := c.now()
	for id, l := range c.read {
		seen, ok := c.live.lastRenewal(id)
		if id == c.cfg.ID || !ok || now.Sub(seen) < max(durationOf(&l), c.cfg.LeaseDuration) {
			continue
		}
		rv := l.ResourceVersion
		err := c.leases.Delete(ctx, id, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		if err == nil {
			c.log.Info("deleted the Lease of a member gone: it expired", "lease", c.cfg.Namespace+"/"+id)
		}
	}
}

// leave gives all work up and, once its reconciles are done, deletes the
// Lease so the others take over at once instead of after its expiry.
func (c *Coordinator) leave() {
	c.mu.Lock()
	c.fenced = true
	c.fences++
	c.assignment.Store(&Assignment{})
	if c.watchdog != nil {
		c.watchdog.Stop()
	}
	c.mu.Unlock()
	metrics.ShardNamespaces.Set(0)
	ctx, cancel := context.WithTimeout(context.Background(), leaveWait)
	defer cancel()
	if err := c.drain(ctx, func(string) bool { return false }); err != nil {
		c.log.Info("reconciles still running when stopping: the shard Lease is left to expire", "error", err.Error())
		return
	}
	c.recordStops(nil)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.leases.Delete(ctx, c.cfg.ID, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		c.log.Info("deleting the shard Lease failed: it is left to expire", "error", err.Error())
		return
	}
	c.log.Info("left the ring", "lease", c.cfg.Namespace+"/"+c.cfg.ID)
}

// recordStarts logs, at debug level and before next takes effect, each of
// namespaces next has this replica start working. With recordStops this is a
// journal, to the microsecond, of when the replica may write where: what a
// test holds against the API server's audit log. A namespace paused while
// another member still claims it stays in the journal: no one else may
// start it until this replica's claim drops it.
func (c *Coordinator) recordStarts(namespaces []string, next *Assignment) {
	if !c.log.V(1).Enabled() {
		return
	}
	c.journalMu.Lock()
	defer c.journalMu.Unlock()
	if c.journal == nil {
		c.journal = map[string]bool{}
	}
	at := c.now().UTC().Format(time.RFC3339Nano)
	for _, ns := range namespaces {
		if !c.journal[ns] && next.Works(ns) {
			c.journal[ns] = true
			c.log.V(1).Info("namespace handover", "namespace", ns, "working", true, "at", at)
		}
	}
}

// recordStops logs each namespace of the journal works (nil: none) no
// longer accepts, once this replica has stopped working it.
func (c *Coordinator) recordStops(works func(string) bool) {
	c.journalMu.Lock()
	defer c.journalMu.Unlock()
	at := c.now().UTC().Format(time.RFC3339Nano)
	for ns := range c.journal {
		if works == nil || !works(ns) {
			delete(c.journal, ns)
			c.log.V(1).Info("namespace handover", "namespace", ns, "working", false, "at", at)
		}
	}
}

func sameClaims(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for id, claim := range a {
		if other, ok := b[id]; !ok || !slices.Equal(claim, other) {
			return false
		}
	}
	return true
}
