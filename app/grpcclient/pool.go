package grpcclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
	"github.com/eso-dev/eso/app/metrics"
	"github.com/eso-dev/eso/app/version"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/plugin/wire"
)

// connKey identifies connections that may be shared: same address, same
// client certificate Secret at the same version. A rotated certificate is a
// new key, so it gets a connection of its own.
type connKey struct {
	address     string
	certificate types.NamespacedName
	// certVersion is a digest of the certificate material.
	certVersion string
}

// conn is a connection whose handshake succeeded, and the clients using it.
type conn struct {
	key   connKey
	ready chan struct{} // closed when dialled and handshaken (or failed)
	err   error
	cc    *grpc.ClientConn
	info  *providerv1.HandshakeResponse
	// incompatible is set when the provider process behind the connection,
	// handshaken again after a reconnect, no longer speaks this core's
	// protocol (it was replaced by another version): every call then fails
	// with it.
	incompatible atomic.Pointer[error]
	stopWatch    context.CancelFunc

	// Guarded by pool.mu.
	users   int
	retired bool
	idle    *time.Timer
}

// serves checks that the server serves kind as a provider or a generator.
func (c *conn) serves(kind string, generator bool) error {
	kinds, what := c.info.GetProviderKinds(), "provider"
	if generator {
		kinds, what = c.info.GetGeneratorKinds(), "generator"
	}
	if slices.Contains(kinds, kind) {
		return nil
	}
	served := strings.Join(kinds, ", ")
	if served == "" {
		served = "none"
	}
	return fmt.Errorf("%w: the provider at %s does not serve %s kind %s (it serves: %s)", ErrKindNotServed, c.key.address, what, kind, served)
}

// pool keeps one connection per connKey, shared by every store and
// generator using it, and closes it once unused for IdleTimeout or once a
// newer version of its certificate Secret is in use.
type pool struct {
	opts   Options
	reader client.Reader

	mu     sync.Mutex
	conns  map[connKey]*conn
	certs  map[types.NamespacedName]certRead
	closed bool
}

type certRead struct {
	secret *corev1.Secret
	at     time.Time
}

func newPool(reader client.Reader, opts Options) *pool {
	return &pool{opts: opts, reader: reader, conns: map[connKey]*conn{}, certs: map[types.NamespacedName]certRead{}}
}

var errPoolClosed = errors.New("remote provider connections are closed")

// acquire returns a handshaken connection to ep for the caller, who calls
// release when done with it.
func (p *pool) acquire(ctx context.Context, ep Endpoint) (*conn, error) {
	if ep.refused != nil {
		return nil, ep.refused
	}
	key := connKey{address: ep.Address}
	var secret *corev1.Secret
	if ep.Certificate != nil {
		var err error
		if secret, err = p.certificate(ctx, *ep.Certificate); err != nil {
			return nil, err
		}
		key.certificate = *ep.Certificate
		key.certVersion = certVersion(secret)
	} else if !p.opts.Insecure {
		return nil, ErrPlaintextRefused
	}

	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errPoolClosed
	}
	c, ok := p.conns[key]
	if !ok {
		c = &conn{key: key, ready: make(chan struct{})}
		p.conns[key] = c
		p.retireOlderLocked(key)
	}
	c.users++
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
	p.mu.Unlock()

	if !ok {
		// The handshake outlives the caller that happened to start it:
		// others may be waiting for the same connection.
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.opts.CallTimeout)
		c.cc, c.info, c.err = p.dial(hctx, key, secret)
		cancel()
		if c.err == nil {
			p.watchReconnects(c)
		}
		if c.err != nil {
			p.mu.Lock()
			if p.conns[key] == c {
				delete(p.conns, key) // the next caller tries afresh
			}
			p.mu.Unlock()
		}
		close(c.ready)
	}
	select {
	case <-c.ready:
	case <-ctx.Done():
		p.release(c)
		return nil, fmt.Errorf("%w: connecting to %s: %w", wire.ErrUnavailable, ep.Address, ctx.Err())
	}
	if c.err != nil {
		p.release(c)
		return nil, c.err
	}
	return c, nil
}

// retireOlderLocked retires the connections made with older versions of
// key's certificate Secret: they close once their last user is done.
func (p *pool) retireOlderLocked(key connKey) {
	for k, old := range p.conns {
		if k != key && k.address == key.address && k.certificate == key.certificate {
			delete(p.conns, k)
			old.retired = true
			if old.users == 0 {
				p.closeLocked(old)
			}
		}
	}
}

// release gives back a connection acquire returned.
func (p *pool) release(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c.users--
	if c.users > 0 {
		return
	}
	if c.retired || p.conns[c.key] != c {
		p.closeLocked(c)
		return
	}
	c.idle = time.AfterFunc(p.opts.IdleTimeout, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if c.users == 0 && p.conns[c.key] == c {
			delete(p.conns, c.key)
			p.closeLocked(c)
		}
	})
}

func (p *pool) closeLocked(c *conn) {
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
	select {
	case <-c.ready:
		if c.stopWatch != nil {
			c.stopWatch()
		}
		if c.cc != nil {
			_ = c.cc.Close()
		}
	default:
		// Still dialling: whoever dials sees it retired when releasing.
		c.retired = true
	}
}

// close closes every connection; clients still holding one get errors.
func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for k, c := range p.conns {
		delete(p.conns, k)
		c.retired = true
		p.closeLocked(c)
	}
}

// open reports how many connections are in the pool, for tests.
func (p *pool) open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// dial connects to key's address and checks the server speaks this core's
// protocol major.
func (p *pool) dial(ctx context.Context, key connKey, secret *corev1.Secret) (*grpc.ClientConn, *providerv1.HandshakeResponse, error) {
	creds := insecure.NewCredentials()
	if secret != nil {
		cfg, err := tlsConfig(secret, key.address)
		if err != nil {
			return nil, nil, err
		}
		creds = credentials.NewTLS(cfg)
	}
	cc, err := grpc.NewClient(key.address,
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize), grpc.MaxCallSendMsgSize(MaxMessageSize)),
		// Pings find a provider that went away without closing the
		// connection (a node lost) before a call waits out its deadline.
		// A server enforcing a longer interval answers with GOAWAY
		// too_many_pings, after which the client pings less often.
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: time.Minute, Timeout: 20 * time.Second, PermitWithoutStream: true}),
		// Reconnect soon after a provider restarts: syncs wait on it.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 500 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 10 * time.Second},
			MinConnectTimeout: 10 * time.Second,
		}),
		// What a DNS record says must not change retries or balancing.
		grpc.WithDisableServiceConfig(),
		grpc.WithUserAgent("eso/"+version.Version),
		grpc.WithChainUnaryInterceptor(observeCalls),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: address %q: %v", plugin.ErrInvalidConfig, key.address, err)
	}
	info, err := handshake(ctx, p.opts, providerv1.NewInfoClient(cc), key.address)
	err = transportHint(err, secret == nil)
	if err != nil {
		_ = cc.Close()
		return nil, nil, err
	}
	return cc, info, nil
}

// transportHint names the likely cause when the two ends disagree about
// TLS, which gRPC's own message ("error reading server preface", "first
// record does not look like a TLS handshake") does not say. The error keeps
// its class.
func transportHint(err error, plaintext bool) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	switch {
	case plaintext && strings.Contains(msg, "error reading server preface"):
		return fmt.Errorf("%w (eso connected without TLS; the provider process probably serves mTLS: give the store providerConfig.auth.clientCertificate)", err)
	case !plaintext && strings.Contains(msg, "first record does not look like a TLS handshake"):
		return fmt.Errorf("%w (the provider process serves plaintext, started with --insecure: serve it with TLS)", err)
	}
	return err
}

// handshake asks the server what it serves and refuses one without this
// core's protocol major.
func handshake(ctx context.Context, opts Options, info providerv1.InfoClient, address string) (*providerv1.HandshakeResponse, error) {
	req := &providerv1.HandshakeRequest{ProtocolMajors: []uint32{wire.ProtocolMajor}, ClientVersion: version.Version}
	resp, err := invoke(ctx, opts, opts.Attempts, func(ctx context.Context) (*providerv1.HandshakeResponse, error) {
		return info.Handshake(ctx, req)
	})
	if err != nil {
		if errors.Is(err, plugin.ErrNotSupported) { // Unimplemented
			return nil, fmt.Errorf("%w: the server at %s does not answer Info.Handshake: it is no eso provider, or one older than protocol major %d", ErrIncompatibleProvider, address, wire.ProtocolMajor)
		}
		return nil, fmt.Errorf("handshake with the provider at %s: %w", address, err)
	}
	if !slices.Contains(resp.GetProtocolMajors(), wire.ProtocolMajor) {
		return nil, fmt.Errorf("%w: the provider at %s (eso %s) speaks protocol majors %v, this eso core speaks %d: run core and providers of compatible versions",
			ErrIncompatibleProvider, address, resp.GetServerVersion(), resp.GetProtocolMajors(), wire.ProtocolMajor)
	}
	return resp, nil
}

// watchReconnects handshakes again each time the connection comes back
// after it was lost: the provider process may have been replaced by another
// version at the same address. An incompatible one marks the connection, so
// its calls fail with ErrIncompatibleProvider (a clear store condition), and
// retires it, so the next client dials afresh.
func (p *pool) watchReconnects(c *conn) {
	ctx, cancel := context.WithCancel(context.Background())
	c.stopWatch = cancel
	go func() {
		state, lost := c.cc.GetState(), false
		for c.cc.WaitForStateChange(ctx, state) {
			state = c.cc.GetState()
			switch state {
			default: // Idle, Connecting, TransientFailure: the connection went away
				lost = true
			case connectivity.Ready:
				if !lost {
					continue
				}
				lost = false
				hctx, done := context.WithTimeout(ctx, p.opts.CallTimeout)
				_, err := handshake(hctx, p.opts, providerv1.NewInfoClient(c.cc), c.key.address)
				done()
				if errors.Is(err, ErrIncompatibleProvider) {
					c.incompatible.Store(&err)
					p.retire(c)
					return
				}
			}
		}
	}()
}

// retire drops c from the pool; it closes once its last user is done.
func (p *pool) retire(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns[c.key] == c {
		delete(p.conns, c.key)
	}
	c.retired = true
}

// Invoke implements grpc.ClientConnInterface for the stubs, refusing calls
// once the provider process turned out incompatible.
func (c *conn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if err := c.incompatible.Load(); err != nil {
		return *err
	}
	return c.cc.Invoke(ctx, method, args, reply, opts...)
}

// NewStream implements grpc.ClientConnInterface (the protocol has no streams).
func (c *conn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if err := c.incompatible.Load(); err != nil {
		return nil, *err
	}
	return c.cc.NewStream(ctx, desc, method, opts...)
}

// certificate reads the client certificate Secret, trusting a read younger
// than CertificateTTL.
func (p *pool) certificate(ctx context.Context, name types.NamespacedName) (*corev1.Secret, error) {
	p.mu.Lock()
	read, ok := p.certs[name]
	p.mu.Unlock()
	if ok && time.Since(read.at) < p.opts.CertificateTTL {
		return read.secret, nil
	}
	var secret corev1.Secret
	if err := p.reader.Get(ctx, name, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%w: client certificate Secret %s not found", plugin.ErrInvalidConfig, name)
		}
		return nil, fmt.Errorf("reading client certificate Secret %s: %w", name, err)
	}
	p.mu.Lock()
	p.certs[name] = certRead{secret: &secret, at: time.Now()}
	p.mu.Unlock()
	return &secret, nil
}

// certVersion is a digest of the Secret's certificate material, so a new
// connection (and new clients) follow a rotation but not an edit of its
// labels or annotations (cert-manager writes those too).
func certVersion(s *corev1.Secret) string {
	h := sha256.New()
	for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey, KeyCA} {
		fmt.Fprintf(h, "%d:", len(s.Data[k]))
		h.Write(s.Data[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// observeCalls times every call core makes to a provider process, per attempt.
func observeCalls(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	start := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	metrics.RemoteCallDuration.WithLabelValues(path.Base(method), status.Code(err).String()).Observe(time.Since(start).Seconds())
	return err
}
