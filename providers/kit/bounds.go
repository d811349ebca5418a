package kit

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/eso-dev/eso/providers/plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// LimitResponses wraps rt so that reading more than maxBytes of any response
// body fails with ErrTooLarge. The error comes from reading the body, not
// from RoundTrip, so an SDK does not take it for a broken connection and
// retry. rt's CloseIdleConnections is kept.
func LimitResponses(rt http.RoundTripper, maxBytes int64) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &limitedTransport{next: rt, max: maxBytes}
}

type limitedTransport struct {
	next http.RoundTripper
	max  int64
}

func (t *limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err == nil {
		LimitResponse(resp, t.max)
	}
	return resp, err
}

// LimitResponse makes reading more than maxBytes of resp's body fail with
// ErrTooLarge, for clients that take a Do function rather than a transport.
func LimitResponse(resp *http.Response, maxBytes int64) {
	if resp == nil || resp.Body == nil {
		return
	}
	host := ""
	if resp.Request != nil {
		host = resp.Request.URL.Host
	}
	resp.Body = &limitedBody{body: resp.Body, left: maxBytes, max: maxBytes, host: host, announced: resp.ContentLength}
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// wrapped transport.
func (t *limitedTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// limitedBody reads at most max bytes; one byte more is ErrTooLarge. A
// Content-Length already past max fails before anything is read.
type limitedBody struct {
	body      io.ReadCloser
	left, max int64
	host      string
	announced int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.announced > b.max {
		return 0, b.tooLarge()
	}
	if b.left <= 0 {
		// A body of exactly max bytes is fine: look for one more.
		var probe [1]byte
		n, err := b.body.Read(probe[:])
		if n > 0 {
			return 0, b.tooLarge()
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.body.Close() }

func (b *limitedBody) tooLarge() error {
	return fmt.Errorf("%w: the response from %s is larger than eso reads (%s)", plugin.ErrTooLarge, b.host, plugin.FormatBytes(b.max))
}

// TooLargeMessage is ErrTooLarge naming limit when err is gRPC refusing a
// message past its size bound (ResourceExhausted: "received message larger
// than max" on the receiving side, "trying to send message larger than
// max" on the sending one), nil otherwise. Such a refusal is not an
// overload: retrying brings the same message.
func TooLargeMessage(err error, limit int64) error {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.ResourceExhausted {
		return nil
	}
	if msg := st.Message(); !strings.HasPrefix(msg, "grpc: received message larger than max") &&
		!strings.HasPrefix(msg, "grpc: trying to send message larger than max") {
		return nil
	}
	return fmt.Errorf("%w: a message is larger than eso exchanges with this endpoint (%s)", plugin.ErrTooLarge, plugin.FormatBytes(limit))
}

// FindBudget counts what one find has looked at and returned, so that a
// find over a tree a tenant fills (or a server it runs) stops with
// ErrTooLarge at a stated bound. It errors rather than truncates: a partial
// result would be written as if it were the whole, and under deletionPolicy
// Delete or Merge keys would vanish from the Secret without a word.
type FindBudget struct {
	listed, results int
	bytes           int64
}

// Listed counts n names a find looked at.
func (b *FindBudget) Listed(n int) error {
	b.listed += n
	if b.listed > plugin.MaxFindListed {
		return fmt.Errorf("%w: the find looks at more than %d names; narrow it with find.path, find.name or find.tags", plugin.ErrTooLarge, plugin.MaxFindListed)
	}
	return nil
}

// Result counts one secret a find returns and its value's size.
func (b *FindBudget) Result(value []byte) error {
	b.results++
	b.bytes += int64(len(value))
	switch {
	case b.results > plugin.MaxFindResults:
		return fmt.Errorf("%w: the find returns more than %d secrets; narrow it with find.path, find.name or find.tags", plugin.ErrTooLarge, plugin.MaxFindResults)
	case b.bytes > plugin.MaxFindBytes:
		return fmt.Errorf("%w: the secrets the find returns hold more than %s; narrow it with find.path, find.name or find.tags", plugin.ErrTooLarge, plugin.FormatBytes(plugin.MaxFindBytes))
	}
	return nil
}

// Depth checks how many folder levels below its root a find has descended.
func (b *FindBudget) Depth(level int) error {
	if level > plugin.MaxFindDepth {
		return fmt.Errorf("%w: the find descends more than %d folder levels; narrow it with find.path", plugin.ErrTooLarge, plugin.MaxFindDepth)
	}
	return nil
}
