package manager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// singletons run the runnables that need leader election (issuing the
// provider certificates) on one replica at a time, with --shards auto.
// There the manager holds no election of its own: controller-runtime's ends
// the process when its Lease is lost, and with the process the replica's
// share of the namespaces, although the election only picks who runs the
// singletons. Losing this Lease stops only the singletons, and the replica
// campaigns again.
type singletons struct {
	election leaderelection.LeaderElectionConfig // without Callbacks
	log      logr.Logger

	mu        sync.Mutex
	runnables []manager.Runnable
	started   bool
	// running is held while the runnables run, so that one term's run
	// never overlaps the next one's (client-go starts it in a goroutine).
	running sync.Mutex
}

var _ manager.LeaderElectionRunnable = (*singletons)(nil)

func newSingletonGroup(lock resourcelock.Interface, lease, renew, retry time.Duration, log logr.Logger) *singletons {
	return &singletons{log: log, election: leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry,
		ReleaseOnCancel: true, Name: lock.Describe(),
	}}
}

// needsElection is controller-runtime's rule: a runnable needs leader
// election unless it says it does not.
func needsElection(r manager.Runnable) bool {
	ler, ok := r.(manager.LeaderElectionRunnable)
	return !ok || ler.NeedLeaderElection()
}

// add makes r one of the singletons. Only before Start: a runnable added
// later would wait for the next term.
func (s *singletons) add(r manager.Runnable) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("a runnable that needs leader election was added after the manager started")
	}
	s.runnables = append(s.runnables, r)
	return nil
}

// NeedLeaderElection: they hold an election of their own.
func (s *singletons) NeedLeaderElection() bool { return false }

// Start campaigns until ctx ends, running the singletons for as long as
// each term lasts. An error of one ends it, as it would end the manager.
func (s *singletons) Start(ctx context.Context) error {
	s.mu.Lock()
	s.started = true
	runnables := s.runnables
	s.mu.Unlock()
	if len(runnables) == 0 {
		return nil
	}
	failed := make(chan error, 1)
	for ctx.Err() == nil {
		term, end := context.WithCancel(ctx)
		cfg := s.election
		cfg.Callbacks = leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leading context.Context) {
				s.running.Lock()
				defer s.running.Unlock()
				if leading.Err() != nil {
					return // this term is over already
				}
				if err := runAll(leading, runnables); err != nil {
					select {
					case failed <- err:
					default:
					}
					end()
				}
			},
			OnStoppedLeading: func() {},
		}
		le, err := leaderelection.NewLeaderElector(cfg)
		if err != nil {
			end()
			return fmt.Errorf("singleton election: %w", err)
		}
		le.Run(term) // returns when the Lease is lost or ctx ends
		end()
		select {
		case err := <-failed:
			return err
		default:
		}
		if ctx.Err() == nil {
			s.log.Info("lost the singleton Lease; campaigning again", "lease", s.election.Name)
		}
	}
	s.running.Lock() // the last term's runnables have returned
	defer s.running.Unlock()
	return nil
}

// runAll runs the runnables until ctx ends or one fails, and returns once
// all have returned.
func runAll(ctx context.Context, runnables []manager.Runnable) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(runnables))
	var wg sync.WaitGroup
	for i, r := range runnables {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = r.Start(ctx); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
