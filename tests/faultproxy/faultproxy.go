// Package faultproxy stands between eso and a real provider server in tests
// and can be switched to fail: answer every request with an HTTP status (a
// throttling or 5xx response), or drop the connection (Proxy), or drop every
// connection below HTTP (TCP), until told to pass again. It shows what eso does when a provider misbehaves without teaching
// the provider's emulator to misbehave.
package faultproxy

import (
	"io"
	"net"
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

// TCP forwards connections on loopback to a server, byte for byte: it
// stands in front of what an HTTP/1 reverse proxy cannot (gRPC over
// plaintext HTTP/2, TLS that must reach the server). Failing, it closes every
// open connection and every new one at once: the server is unreachable.
type TCP struct {
	// Addr is the proxy's host:port, to configure in place of the server's.
	Addr string

	target  string
	mu      sync.Mutex
	failing bool
	closed  bool // the test ended: refuse everything, for good
	open    map[net.Conn]struct{}
	dropped atomic.Int64
}

// StartTCP forwards connections to target (host:port) until the test ends.
func StartTCP(t testing.TB, target string) *TCP {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("faultproxy: %v", err)
	}
	p := &TCP{Addr: l.Addr().String(), target: target, open: map[net.Conn]struct{}{}}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { p.serve(c) })
		}
	})
	t.Cleanup(func() {
		_ = l.Close()
		p.mu.Lock()
		p.closed = true // a connection accepted just now is refused, not tracked after closeOpen
		p.mu.Unlock()
		p.closeOpen()
		wg.Wait()
	})
	return p
}

// serve forwards c until either side closes it or the proxy fails.
func (p *TCP) serve(c net.Conn) {
	defer c.Close()
	if !p.track(c) {
		return
	}
	defer p.untrack(c)
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	if !p.track(s) {
		return
	}
	defer p.untrack(s)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(s, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, s); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = s.Close()
	<-done
}

// track registers an open connection; while failing it refuses it instead.
func (p *TCP) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if p.failing {
		p.dropped.Add(1)
		return false
	}
	p.open[c] = struct{}{}
	return true
}

func (p *TCP) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.open, c)
}

func (p *TCP) closeOpen() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.open {
		_ = c.Close()
		delete(p.open, c)
	}
}

// Fail closes the connections open now and every new one until Pass.
func (p *TCP) Fail() {
	p.mu.Lock()
	p.failing = true
	p.mu.Unlock()
	p.closeOpen()
}

// Pass forwards new connections to the server again.
func (p *TCP) Pass() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failing = false
}

// Failed is how many connections the proxy refused while failing (those
// it closed when it started failing are not counted).
func (p *TCP) Failed() int64 { return p.dropped.Load() }
