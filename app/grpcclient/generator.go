package grpcclient

import (
	"context"

	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/plugin/wire"
)

// generator is a plugin.Generator served by a provider process.
type generator struct {
	remote *Remote
	ep     Endpoint
	kind   string
}

var _ plugin.Generator = (*generator)(nil)

func (g *generator) Kind() string { return g.kind }

// with runs call on a connection to a server that serves the kind.
func (g *generator) with(ctx context.Context, call func(providerv1.GeneratorProviderClient) error) error {
	c, err := g.remote.pool.acquire(ctx, g.ep)
	if err != nil {
		return err
	}
	defer g.remote.pool.release(c)
	if err := c.serves(g.kind, true); err != nil {
		return err
	}
	return call(providerv1.NewGeneratorProviderClient(c))
}

// Generate is made once, never retried: a value generated whose answer was
// lost cannot be revoked, and a retry would make another. The caller's next
// attempt comes with its backoff.
func (g *generator) Generate(ctx context.Context, ref plugin.Ref, scope plugin.Scope) (map[string][]byte, plugin.State, error) {
	var resp *providerv1.GenerateResponse
	err := g.with(ctx, func(stub providerv1.GeneratorProviderClient) error {
		req := &providerv1.GenerateRequest{Target: wire.ToTarget(ref, scope)}
		var err error
		resp, err = invoke(ctx, g.remote.opts, 1, func(ctx context.Context) (*providerv1.GenerateResponse, error) {
			return stub.Generate(ctx, req)
		})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var state plugin.State
	if len(resp.GetState()) > 0 {
		state = plugin.State(resp.GetState())
	}
	return resp.GetData(), state, nil
}

func (g *generator) Cleanup(ctx context.Context, ref plugin.Ref, scope plugin.Scope, state plugin.State) error {
	return g.with(ctx, func(stub providerv1.GeneratorProviderClient) error {
		req := &providerv1.CleanupRequest{Target: wire.ToTarget(ref, scope), State: state}
		_, err := invoke(ctx, g.remote.opts, g.remote.opts.Attempts, func(ctx context.Context) (*providerv1.CleanupResponse, error) {
			return stub.Cleanup(ctx, req)
		})
		return err
	})
}

func (g *generator) Validate(ctx context.Context, ref plugin.Ref, scope plugin.Scope) error {
	return g.with(ctx, func(stub providerv1.GeneratorProviderClient) error {
		req := &providerv1.ValidateRequest{Target: wire.ToTarget(ref, scope)}
		_, err := invoke(ctx, g.remote.opts, g.remote.opts.Attempts, func(ctx context.Context) (*providerv1.ValidateResponse, error) {
			return stub.ValidateGenerator(ctx, req)
		})
		return err
	})
}
