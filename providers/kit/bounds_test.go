package kit

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/eso-dev/eso/providers/plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestLimitResponses: a body up to the cap is read whole; one byte more, an
// announced length past it or an endless chunked body is ErrTooLarge (and
// so a NotSupported), with the cap in the message and none of the body.
func TestLimitResponses(t *testing.T) {
	const limit = 1000
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		switch r.URL.Path {
		case "/announced":
			w.Header().Set("Content-Length", strconv.Itoa(n))
			_, _ = w.Write(bytes.Repeat([]byte("s"), min(n, limit/2))) // claims more than it sends
		case "/endless":
			for r.Context().Err() == nil {
				if _, err := w.Write(bytes.Repeat([]byte("s"), 512)); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		default:
			_, _ = w.Write(bytes.Repeat([]byte("s"), n))
		}
	}))
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: LimitResponses(srv.Client().Transport, limit)}
	read := func(path string) ([]byte, error) {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			return nil, err
		}
		defer func() { _ = resp.Body.Close() }()
		return io.ReadAll(resp.Body)
	}

	if body, err := read("/?n=" + strconv.Itoa(limit)); err != nil || len(body) != limit {
		t.Fatalf("a body of exactly the cap: %d bytes, %v", len(body), err)
	}
	for _, path := range []string{"/?n=" + strconv.Itoa(limit+1), "/announced?n=" + strconv.Itoa(10*limit), "/endless"} {
		_, err := read(path)
		if !errors.Is(err, plugin.ErrTooLarge) || !errors.Is(err, plugin.ErrNotSupported) {
			t.Errorf("%s: error %v, want ErrTooLarge", path, err)
			continue
		}
		if !strings.Contains(err.Error(), "1000 B") || strings.Contains(err.Error(), "sss") {
			t.Errorf("%s: error %q should name the cap and hold no body", path, err)
		}
	}
}

// TestFindBudget: each bound admits exactly its number and refuses one more.
func TestFindBudget(t *testing.T) {
	var b FindBudget
	if err := b.Listed(plugin.MaxFindListed); err != nil {
		t.Fatalf("listing %d names: %v", plugin.MaxFindListed, err)
	}
	if err := b.Listed(1); !errors.Is(err, plugin.ErrTooLarge) {
		t.Errorf("listing one more: %v, want ErrTooLarge", err)
	}

	b = FindBudget{}
	for i := range plugin.MaxFindResults {
		if err := b.Result([]byte("v")); err != nil {
			t.Fatalf("result %d: %v", i+1, err)
		}
	}
	if err := b.Result([]byte("v")); !errors.Is(err, plugin.ErrTooLarge) {
		t.Errorf("result %d: %v, want ErrTooLarge", plugin.MaxFindResults+1, err)
	}

	b = FindBudget{}
	if err := b.Result(make([]byte, plugin.MaxFindBytes)); err != nil {
		t.Fatalf("a result of exactly %d bytes: %v", plugin.MaxFindBytes, err)
	}
	if err := b.Result([]byte("v")); !errors.Is(err, plugin.ErrTooLarge) || !strings.Contains(err.Error(), "4 MiB") {
		t.Errorf("one byte more: %v, want ErrTooLarge naming 4 MiB", err)
	}

	if err := b.Depth(plugin.MaxFindDepth); err != nil {
		t.Errorf("depth %d: %v", plugin.MaxFindDepth, err)
	}
	if err := b.Depth(plugin.MaxFindDepth + 1); !errors.Is(err, plugin.ErrTooLarge) {
		t.Errorf("depth %d: %v, want ErrTooLarge", plugin.MaxFindDepth+1, err)
	}
}

// TestTooLargeMessage: gRPC refusing a message for its size, on either
// side, is too large (not an overload to retry); other exhaustion is not.
func TestTooLargeMessage(t *testing.T) {
	for msg, want := range map[string]bool{
		"grpc: received message larger than max (5000000 vs. 4194304)":       true,
		"grpc: trying to send message larger than max (5000000 vs. 4194304)": true,
		"quota exceeded": false,
	} {
		err := TooLargeMessage(status.Error(codes.ResourceExhausted, msg), 4<<20)
		if got := errors.Is(err, plugin.ErrTooLarge); got != want {
			t.Errorf("%q: too large %v, want %v", msg, got, want)
		}
	}
	if TooLargeMessage(status.Error(codes.Unavailable, "grpc: received message larger than max"), 4<<20) != nil {
		t.Error("a code other than ResourceExhausted read as too large")
	}
}
