// Package faultproxy stands between eso and a real provider server in tests
// and can be switched to fail: answer every request with an HTTP status (a
// throttling or 5xx response), or drop the connection, until told to pass
// again. It shows what eso does when a provider misbehaves without teaching
// the provider's emulator to misbehave.
package faultproxy

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// Fault is how the proxy answers while failing.
type Fault struct {
	// Status and Body are the response; Header is added to it.
	Status int
	Body   string
	Header map[string]string
	// Drop closes the connection without an answer instead.
	Drop bool
}

// Proxy is a reverse proxy on loopback.
type Proxy struct {
	// URL is the proxy's address, to configure in place of the server's.
	URL string

	mu       sync.Mutex
	fault    *Fault
	requests map[string]int // by path, forwarded or failed
	failed   atomic.Int64
}

// Start proxies to target until the test ends.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("faultproxy: bad target %q: %v", target, err)
	}
	p := &Proxy{requests: map[string]int{}}
	forward := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		f := p.fault
		p.requests[r.URL.Path]++
		p.mu.Unlock()
		if f == nil {
			forward.ServeHTTP(w, r)
			return
		}
		p.failed.Add(1)
		if f.Drop {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = conn.Close()
				return
			}
			panic(http.ErrAbortHandler)
		}
		for k, v := range f.Header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(f.Status)
		_, _ = w.Write([]byte(f.Body))
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// Fail makes every request from now on get f.
func (p *Proxy) Fail(f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = &f
}

// Pass forwards requests to the server again.
func (p *Proxy) Pass() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = nil
}

// Failed is how many requests got the fault so far.
func (p *Proxy) Failed() int64 { return p.failed.Load() }

// Requests is how many requests for path (e.g. "/v1/auth/approle/login")
// the proxy received, forwarded or failed: how often a client logged in.
func (p *Proxy) Requests(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests[path]
}
