package main

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// connSampler counts, every 200 ms, the TCP connections this machine holds
// or is opening to one port (the API server's), and keeps the peak. A
// replica start that dials a connection per request shows up here as
// thousands, long before it costs a replica its Lease.
type connSampler struct {
	mu   sync.Mutex
	peak int
	at   time.Time
	err  error
}

func sampleConnections(ctx context.Context, port int) *connSampler {
	s := &connSampler{}
	go func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			n, err := connectionsTo(port)
			s.mu.Lock()
			if err != nil && s.err == nil {
				s.err = err
			}
			if n > s.peak {
				s.peak, s.at = n, time.Now()
			}
			s.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// result is the peak so far, and when it was seen.
func (s *connSampler) result() (int, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak, s.at, s.err
}

// connectionsTo counts the client ends, established or dialling, of TCP
// connections to port, over IPv4 and IPv6.
func connectionsTo(port int) (int, error) {
	n := 0
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			return 0, err
		}
		c, err := countClientEnds(bufio.NewScanner(f), port)
		f.Close()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", table, err)
		}
		n += c
	}
	return n, nil
}

// TCP states in /proc/net/tcp: the client end of a connection is
// ESTABLISHED or, still dialling, SYN_SENT.
const (
	tcpEstablished = "01"
	tcpSynSent     = "02"
)

func countClientEnds(lines *bufio.Scanner, port int) (int, error) {
	want := fmt.Sprintf(":%04X", port)
	n := 0
	lines.Scan() // the header
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) < 4 {
			continue
		}
		remote, state := fields[2], fields[3]
		if strings.HasSuffix(remote, want) && (state == tcpEstablished || state == tcpSynSent) {
			n++
		}
	}
	return n, lines.Err()
}

// portOf is the port of the API server a rest.Config's Host names.
func portOf(host string) (int, error) {
	u, err := url.Parse(host)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(u.Port())
}
