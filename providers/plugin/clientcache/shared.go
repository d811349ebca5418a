package clientcache

import (
	"context"
	"sync"

	"github.com/eso-dev/eso/providers/plugin"
)

// SharedClient is a cached client and the callers using it. A retired client
// (replaced, or its store gone) is closed when the last of them releases it,
// so no call has its connection closed or its token revoked under it.
type SharedClient struct {
	Client plugin.SecretsClient

	mu      sync.Mutex
	users   int
	retired bool
}

// NewSharedClient shares c.
func NewSharedClient(c plugin.SecretsClient) *SharedClient { return &SharedClient{Client: c} }

// Acquire counts one more user.
func (s *SharedClient) Acquire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users++
}

// Releaser returns the release function of one acquisition; calling it more
// than once releases once.
func (s *SharedClient) Releaser(ctx context.Context) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.users--
			closeNow := s.retired && s.users == 0
			s.mu.Unlock()
			if closeNow {
				_ = s.Client.Close(context.WithoutCancel(ctx))
			}
		})
	}
}

// Retire closes the client now if nobody uses it, else when the last user
// releases it.
func (s *SharedClient) Retire(ctx context.Context) {
	s.mu.Lock()
	s.retired = true
	closeNow := s.users == 0
	s.mu.Unlock()
	if closeNow {
		_ = s.Client.Close(context.WithoutCancel(ctx))
	}
}
