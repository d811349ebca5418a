package sharding

import (
	"errors"
	"net/http"
	"strings"
)

// ErrFenced is the error of a write refused by WriteGuard.
var ErrFenced = errors.New("this replica's shard Lease is past its renew deadline: writes are refused until it is renewed")

// WriteGuard wraps the transport of eso's API clients so that no write
// leaves the process while this replica is fenced, or past its Lease's renew
// deadline even before the watchdog has run: a reconcile still running when
// the replica stopped working (a pause, a partition) cannot write after the
// others may have taken its namespaces. Reads pass, and so do Leases (the
// leader election's renewals) and token and access reviews, which change
// nothing (the metrics endpoint's authorization).
func (c *Coordinator) WriteGuard(rt http.RoundTripper) http.RoundTripper {
	return guard{rt: rt, c: c}
}

type guard struct {
	rt http.RoundTripper
	c  *Coordinator
}

func (g guard) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return g.rt.RoundTrip(req)
	}
	if g.c.writable() || passes(req.URL.Path) {
		return g.rt.RoundTrip(req)
	}
	return nil, ErrFenced
}

// writable reports whether this replica's last renewal is recent enough for
// it to write.
func (c *Coordinator) writable() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wrote && !c.fenced && c.now().Sub(c.renewedAt) < c.cfg.RenewDeadline
}

// unguarded are the API groups whose writes WriteGuard lets pass.
var unguarded = []string{"/apis/coordination.k8s.io/", "/apis/authentication.k8s.io/", "/apis/authorization.k8s.io/"}

func passes(path string) bool {
	for _, p := range unguarded {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
