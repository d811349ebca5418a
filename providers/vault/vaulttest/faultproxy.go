package vaulttest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// FaultProxy is a reverse proxy in front of a plain-HTTP server that can be
// switched to answer every request with an error status (a 503 outage, a
// 429 rate limit) instead of forwarding it. It counts the requests it
// receives per path, so tests can see how often a client logs in.
type FaultProxy struct {
	// URL is where clients reach the proxy.
	URL string

	mu       sync.Mutex
	status   int // 0: forward
	requests map[string]int
}

// NewFaultProxy starts a proxy to target (e.g. a dev server's address),
// stopped when the test ends.
func NewFaultProxy(t testing.TB, target string) *FaultProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &FaultProxy{requests: map[string]int{}}
	forward := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.requests[r.URL.Path]++
		status := p.status
		p.mu.Unlock()
		if status == 0 {
			forward.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"errors":[%q]}`, "injected: "+http.StatusText(status))
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// FailWith makes the proxy answer every request with status until Heal.
func (p *FaultProxy) FailWith(status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = status
}

// Heal makes the proxy forward requests again.
func (p *FaultProxy) Heal() { p.FailWith(0) }

// Requests is how many requests for path (e.g. "/v1/auth/approle/login")
// the proxy received, forwarded or failed.
func (p *FaultProxy) Requests(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests[path]
}
