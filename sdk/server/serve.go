package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
)

// Transport defaults. Messages are bounded both ways so one huge secret
// list cannot exhaust either side; a call never outlives MaxCallDuration,
// whatever deadline the client sent (or if it sent none).
const (
	DefaultMaxMessageBytes     = 4 << 20
	DefaultMaxCallDuration     = time.Minute
	DefaultGracefulStopTimeout = 10 * time.Second
	idleSweepInterval          = time.Minute
)

// ServeOptions are the transport's settings.
type ServeOptions struct {
	// TLS is the server's mTLS configuration (NewServerTLSConfig); nil
	// serves plaintext, which only --insecure asks for.
	TLS *tls.Config
	// MaxCallDuration and GracefulStopTimeout default to the constants above.
	MaxCallDuration     time.Duration
	GracefulStopTimeout time.Duration
	// Metrics, if set, count and time every call.
	Metrics *Metrics
	Log     logr.Logger
}

// Endpoint is the server bound to its listener.
type Endpoint struct {
	server      *Server
	grpc        *grpc.Server
	health      *health.Server
	listener    net.Listener
	stopTimeout time.Duration
	log         logr.Logger

	stopSweep chan struct{}
	stopOnce  sync.Once
}

// Listen binds addr now, so a port already in use fails start-up, and
// returns the endpoint ready to Serve.
func Listen(addr string, s *Server, opts ServeOptions) (*Endpoint, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("gRPC listener: %w", err)
	}
	return NewEndpoint(lis, s, opts), nil
}

// NewEndpoint returns the endpoint serving s on lis.
func NewEndpoint(lis net.Listener, s *Server, opts ServeOptions) *Endpoint {
	if opts.MaxCallDuration == 0 {
		opts.MaxCallDuration = DefaultMaxCallDuration
	}
	if opts.GracefulStopTimeout == 0 {
		opts.GracefulStopTimeout = DefaultGracefulStopTimeout
	}
	creds := insecure.NewCredentials()
	if opts.TLS != nil {
		creds = credentials.NewTLS(opts.TLS)
	}
	interceptors := []grpc.UnaryServerInterceptor{}
	if opts.Metrics != nil {
		interceptors = append(interceptors, opts.Metrics.unaryInterceptor)
	}
	interceptors = append(interceptors, logFailures(opts.Log), recoverPanics(opts.Log), capDeadline(opts.MaxCallDuration),
		authorize(opts.TLS == nil))
	gs := grpc.NewServer(
		grpc.Creds(creds),
		grpc.MaxRecvMsgSize(DefaultMaxMessageBytes),
		grpc.MaxSendMsgSize(DefaultMaxMessageBytes),
		grpc.ChainUnaryInterceptor(interceptors...),
		grpc.StreamInterceptor(authorizeStreams),
		// Let core keep idle connections alive with pings, but not flood.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
	)
	providerv1.RegisterInfoServer(gs, &infoService{s: s})
	providerv1.RegisterSecretStoreProviderServer(gs, &secretStoreService{s: s})
	providerv1.RegisterGeneratorProviderServer(gs, &generatorService{s: s})
	hs := health.NewServer()
	for _, name := range []string{"", providerv1.Info_ServiceDesc.ServiceName,
		providerv1.SecretStoreProvider_ServiceDesc.ServiceName, providerv1.GeneratorProvider_ServiceDesc.ServiceName} {
		hs.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
	healthpb.RegisterHealthServer(gs, hs)
	return &Endpoint{server: s, grpc: gs, health: hs, listener: lis, stopTimeout: opts.GracefulStopTimeout,
		log: opts.Log, stopSweep: make(chan struct{})}
}

// Addr is the address the endpoint listens on.
func (e *Endpoint) Addr() net.Addr { return e.listener.Addr() }

// Serving reports whether the endpoint accepts calls, for readiness probes.
func (e *Endpoint) Serving() bool {
	resp, err := e.health.Check(context.Background(), &healthpb.HealthCheckRequest{})
	return err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING
}

// Serve serves until Shutdown; it returns nil after Shutdown.
func (e *Endpoint) Serve() error {
	go e.sweepIdle()
	err := e.grpc.Serve(e.listener)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

func (e *Endpoint) sweepIdle() {
	t := time.NewTicker(idleSweepInterval)
	defer t.Stop()
	for {
		select {
		case <-e.stopSweep:
			return
		case <-t.C:
			e.server.DropIdle(context.Background())
		}
	}
}

// Shutdown reports NOT_SERVING, lets calls in flight finish for up to the
// graceful stop timeout (or ctx's deadline, if sooner), then cuts the rest
// and closes every provider client.
func (e *Endpoint) Shutdown(ctx context.Context) {
	e.stopOnce.Do(func() {
		close(e.stopSweep)
		e.health.Shutdown()
		// Serve may never have taken the listener over.
		defer e.listener.Close()
		bound, cancel := context.WithTimeout(ctx, e.stopTimeout)
		defer cancel()
		done := make(chan struct{})
		go func() {
			e.grpc.GracefulStop()
			close(done)
		}()
		select {
		case <-done:
		case <-bound.Done():
			e.log.Info("calls still running at the end of the graceful stop; cutting them")
			e.grpc.Stop()
			<-done
		}
		e.server.Close(ctx)
	})
}

// capDeadline bounds every call by max.
func capDeadline(max time.Duration) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if deadline, ok := ctx.Deadline(); !ok || time.Until(deadline) > max {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, max)
			defer cancel()
		}
		return handler(ctx, req)
	}
}

// recoverPanics turns a provider's panic into an Internal error for that
// call instead of ending the process for every store. The panic value is not
// logged: it might hold what the provider was handling.
func recoverPanics(log logr.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error(fmt.Errorf("panic of type %T", r), "call panicked", "method", info.FullMethod, "stack", string(debug.Stack()))
				resp, err = nil, status.Error(codes.Internal, "the provider failed unexpectedly; see the provider process's log")
			}
		}()
		return handler(ctx, req)
	}
}

// logFailures logs failed calls at debug level: core reports them in
// conditions, so the provider's log needs them only when tracing a problem.
// Messages are the contract's, which never hold a value.
func logFailures(log logr.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := handler(ctx, req)
		if err != nil {
			st := status.Convert(err)
			log.V(1).Info("call failed", "method", info.FullMethod, "code", st.Code().String(), "message", st.Message())
		}
		return resp, err
	}
}
