package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/plugin/wire"
)

// scripted is a provider whose answers depend on the key asked for, to
// exercise the transport: it reads Fake configurations under its own kind.
type scripted struct {
	builds, closes atomic.Int32
	// started is signalled when a "block" call starts; release ends it.
	started, release chan struct{}
}

func newScripted() *scripted {
	return &scripted{started: make(chan struct{}, 10), release: make(chan struct{})}
}

func (p *scripted) registration() plugin.Registration {
	return plugin.Registration{Name: "scripted", Kind: "Scripted", AddToScheme: provv1.AddToScheme,
		NewConfig:   func() client.Object { return &provv1.Fake{} },
		NewProvider: func(plugin.Deps) plugin.Provider { return p }}
}

func (p *scripted) Kind() string                                             { return "Scripted" }
func (p *scripted) Validate(context.Context, plugin.Ref, plugin.Scope) error { return nil }
func (p *scripted) NewClient(context.Context, plugin.Ref, plugin.Scope) (plugin.SecretsClient, error) {
	p.builds.Add(1)
	return &scriptedClient{p: p}, nil
}

type scriptedClient struct{ p *scripted }

func (c *scriptedClient) GetSecret(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	switch ref.Key {
	case "block":
		c.p.started <- struct{}{}
		select {
		case <-c.p.release:
			return []byte("done"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "panic":
		panic("value s3cr3t")
	case "auth":
		return nil, fmt.Errorf("%w: token expired", plugin.ErrAuthFailed)
	case "big":
		return bytes.Repeat([]byte("x"), 5<<20), nil
	}
	return []byte("v"), nil
}

func (c *scriptedClient) GetSecretMap(context.Context, esv1.ExternalSecretDataRemoteRef) (map[string][]byte, error) {
	return nil, plugin.ErrNotSupported
}

func (c *scriptedClient) GetAllSecrets(context.Context, esv1.ExternalSecretFind) (map[string][]byte, error) {
	return nil, plugin.ErrNotSupported
}
func (c *scriptedClient) Capabilities() plugin.Capabilities { return plugin.ReadOnly }
func (c *scriptedClient) Close(context.Context) error       { c.p.closes.Add(1); return nil }

var scriptedTarget = &providerv1.Target{Kind: "Scripted", Name: "demo", Namespace: "team-a", CredentialsNamespace: "team-a"}

func getKey(ctx context.Context, lb *loopback, key string) ([]byte, error) {
	resp, err := lb.stores.GetSecret(ctx, &providerv1.GetSecretRequest{Target: scriptedTarget, Ref: &providerv1.RemoteRef{Key: key}})
	return resp.GetValue(), err
}

func TestServerCapsCallDuration(t *testing.T) {
	p := newScripted()
	lb := startLoopbackWith(t, []plugin.Registration{p.registration()}, ServeOptions{MaxCallDuration: 200 * time.Millisecond})
	start := time.Now()
	// The client allows ten seconds; the server cuts the call at its cap.
	_, err := getKey(callCtx(t), lb, "block")
	if status.Code(err) != codes.DeadlineExceeded || !errors.Is(wire.FromStatus(err), wire.ErrUnavailable) {
		t.Fatalf("a call beyond the cap: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the capped call took %v", took)
	}
}

func TestServerLimitsMessageSize(t *testing.T) {
	p := newScripted()
	lb := startLoopbackWith(t, []plugin.Registration{p.registration()}, ServeOptions{})
	if _, err := getKey(callCtx(t), lb, "big"); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a 5 MiB answer: %v, want ResourceExhausted", err)
	}
	huge := strings.Repeat("k", 5<<20)
	_, err := lb.stores.GetSecret(callCtx(t), &providerv1.GetSecretRequest{Target: scriptedTarget, Ref: &providerv1.RemoteRef{Key: huge}})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a 5 MiB request: %v, want ResourceExhausted", err)
	}
}

func TestServerSurvivesProviderPanic(t *testing.T) {
	p := newScripted()
	lb := startLoopbackWith(t, []plugin.Registration{p.registration()}, ServeOptions{})
	_, err := getKey(callCtx(t), lb, "panic")
	if status.Code(err) != codes.Internal || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("a panicking provider: %v", err)
	}
	if v, err := getKey(callCtx(t), lb, "ok"); err != nil || string(v) != "v" {
		t.Fatalf("after the panic: %q, %v", v, err)
	}
}

// TestRefusedCredentialsLogInAgain: after ErrAuthFailed the next call builds
// a new client, as core's in-process cache does.
func TestRefusedCredentialsLogInAgain(t *testing.T) {
	p := newScripted()
	lb := startLoopbackWith(t, []plugin.Registration{p.registration()}, ServeOptions{})
	ctx := callCtx(t)
	for range 3 {
		if _, err := getKey(ctx, lb, "ok"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := getKey(ctx, lb, "auth"); !errors.Is(wire.FromStatus(err), plugin.ErrAuthFailed) {
		t.Fatalf("refused credentials arrived as %v", err)
	}
	if _, err := getKey(ctx, lb, "ok"); err != nil {
		t.Fatal(err)
	}
	if builds, closes := p.builds.Load(), p.closes.Load(); builds != 2 || closes != 1 {
		t.Fatalf("%d clients built and %d closed, want 2 and 1", builds, closes)
	}
}

// TestGracefulShutdown: a call in flight when the server stops finishes; the
// clients are closed after it.
func TestGracefulShutdown(t *testing.T) {
	p := newScripted()
	lb := startLoopbackWith(t, []plugin.Registration{p.registration()}, ServeOptions{GracefulStopTimeout: 10 * time.Second})
	answer := make(chan error, 1)
	go func() {
		v, err := getKey(callCtx(t), lb, "block")
		if err == nil && string(v) != "done" {
			err = fmt.Errorf("answer %q", v)
		}
		answer <- err
	}()
	<-p.started
	stopped := make(chan struct{})
	go func() {
		lb.endpoint.Shutdown(context.Background())
		close(stopped)
	}()
	select {
	case <-stopped:
		t.Fatal("Shutdown returned with a call in flight")
	case <-time.After(200 * time.Millisecond):
	}
	if lb.endpoint.Serving() {
		t.Error("still SERVING while stopping")
	}
	close(p.release)
	if err := <-answer; err != nil {
		t.Fatalf("the call in flight: %v", err)
	}
	<-stopped
	if p.closes.Load() != 1 {
		t.Fatalf("%d clients closed at shutdown, want 1", p.closes.Load())
	}
}

// TestShutdownIsBounded: a call that does not finish is cut at the bound.
func TestShutdownIsBounded(t *testing.T) {
	p := newScripted()
	lb := startLoopbackWith(t, []plugin.Registration{p.registration()}, ServeOptions{GracefulStopTimeout: 100 * time.Millisecond})
	answer := make(chan error, 1)
	go func() {
		_, err := getKey(callCtx(t), lb, "block")
		answer <- err
	}()
	<-p.started
	start := time.Now()
	lb.endpoint.Shutdown(context.Background())
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Shutdown took %v", took)
	}
	if err := <-answer; status.Code(err) != codes.Unavailable && status.Code(err) != codes.Canceled {
		t.Fatalf("the cut call: %v", err)
	}
}
