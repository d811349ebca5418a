package grpcclient

import (
	"context"
	"errors"
	"fmt"
	"sync"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/plugin/wire"
)

// provider is a plugin.Provider served by a provider process.
type provider struct {
	remote *Remote
	ep     Endpoint
	kind   string
}

func (p *provider) Kind() string { return p.kind }

// connect acquires a connection to a server that serves the kind.
func (p *provider) connect(ctx context.Context) (*conn, error) {
	c, err := p.remote.pool.acquire(ctx, p.ep)
	if err != nil {
		return nil, err
	}
	if err := c.serves(p.kind, false); err != nil {
		p.remote.pool.release(c)
		return nil, err
	}
	return c, nil
}

func (p *provider) Validate(ctx context.Context, ref plugin.Ref, scope plugin.Scope) error {
	c, err := p.connect(ctx)
	if err != nil {
		return err
	}
	defer p.remote.pool.release(c)
	stub := providerv1.NewSecretStoreProviderClient(c)
	req := &providerv1.ValidateRequest{Target: wire.ToTarget(ref, scope)}
	_, err = invoke(ctx, p.remote.opts, p.remote.opts.Attempts, func(ctx context.Context) (*providerv1.ValidateResponse, error) {
		return stub.Validate(ctx, req)
	})
	return err
}

// NewClient returns a client holding a connection until it is closed. Its
// capabilities are asked once, here, which also proves the server answers.
func (p *provider) NewClient(ctx context.Context, ref plugin.Ref, scope plugin.Scope) (plugin.SecretsClient, error) {
	c, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	cl := &secretsClient{remote: p.remote, conn: c, stub: providerv1.NewSecretStoreProviderClient(c), target: wire.ToTarget(ref, scope)}
	resp, err := invoke(ctx, p.remote.opts, p.remote.opts.Attempts, func(ctx context.Context) (*providerv1.CapabilitiesResponse, error) {
		return cl.stub.Capabilities(ctx, &providerv1.CapabilitiesRequest{Target: cl.target})
	})
	if err != nil {
		_ = cl.Close(ctx)
		return nil, err
	}
	switch caps := plugin.Capabilities(resp.GetCapabilities()); caps {
	case plugin.ReadOnly, plugin.WriteOnly, plugin.ReadWrite:
		cl.capabilities = caps
	default:
		_ = cl.Close(ctx)
		return nil, fmt.Errorf("%w: the provider at %s answered capabilities %q", ErrIncompatibleProvider, p.ep.Address, caps)
	}
	if resp.GetPropertiesAreJsonPaths() {
		return &jsonPathsClient{cl}, nil
	}
	return cl, nil
}

// jsonPathsClient is a client whose provider said its properties are JSON
// paths (protocol 1.1): core reads each remote secret once per sync and
// picks the properties itself. A server that does not say so (1.0) gets one
// request per property, which is correct for every provider.
type jsonPathsClient struct{ *secretsClient }

// PropertiesAreJSONPaths implements plugin.JSONProperties.
func (*jsonPathsClient) PropertiesAreJSONPaths() {}

// secretsClient is a provider client whose every call is a request to the
// provider process, for one configuration and scope.
//
// It implements plugin.JSONProperties only as jsonPathsClient, when the
// provider process says so: promising it for a provider whose properties are
// not JSON paths would return wrong values.
type secretsClient struct {
	remote       *Remote
	conn         *conn
	stub         providerv1.SecretStoreProviderClient
	target       *providerv1.Target
	capabilities plugin.Capabilities
	closeOnce    sync.Once
}

var (
	_ plugin.SecretsClient = (*secretsClient)(nil)
	_ plugin.Writer        = (*secretsClient)(nil)
	_ plugin.AuthChecker   = (*secretsClient)(nil)
)

func (c *secretsClient) GetSecret(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	req := &providerv1.GetSecretRequest{Target: c.target, Ref: wire.ToRemoteRef(ref)}
	resp, err := invoke(ctx, c.remote.opts, c.remote.opts.Attempts, func(ctx context.Context) (*providerv1.GetSecretResponse, error) {
		return c.stub.GetSecret(ctx, req)
	})
	if err != nil {
		return nil, err
	}
	return resp.GetValue(), nil
}

func (c *secretsClient) GetSecretMap(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) (map[string][]byte, error) {
	req := &providerv1.GetSecretRequest{Target: c.target, Ref: wire.ToRemoteRef(ref)}
	resp, err := invoke(ctx, c.remote.opts, c.remote.opts.Attempts, func(ctx context.Context) (*providerv1.SecretMapResponse, error) {
		return c.stub.GetSecretMap(ctx, req)
	})
	if err != nil {
		return nil, err
	}
	return resp.GetData(), nil
}

func (c *secretsClient) GetAllSecrets(ctx context.Context, find esv1.ExternalSecretFind) (map[string][]byte, error) {
	req := &providerv1.GetAllSecretsRequest{Target: c.target, Find: wire.ToFind(find)}
	resp, err := invoke(ctx, c.remote.opts, c.remote.opts.Attempts, func(ctx context.Context) (*providerv1.SecretMapResponse, error) {
		return c.stub.GetAllSecrets(ctx, req)
	})
	if err != nil {
		return nil, err
	}
	return resp.GetData(), nil
}

func (c *secretsClient) PushSecret(ctx context.Context, r plugin.PushRequest) error {
	req := &providerv1.PushSecretRequest{Target: c.target, RemoteKey: r.RemoteKey, Property: r.Property, Value: r.Value, Adopt: r.Adopt, Metadata: r.Metadata}
	_, err := invoke(ctx, c.remote.opts, c.remote.opts.Attempts, func(ctx context.Context) (*providerv1.PushSecretResponse, error) {
		return c.stub.PushSecret(ctx, req)
	})
	return err
}

func (c *secretsClient) DeleteSecret(ctx context.Context, remoteKey, property string) error {
	req := &providerv1.DeleteSecretRequest{Target: c.target, RemoteKey: remoteKey, Property: property}
	_, err := invoke(ctx, c.remote.opts, c.remote.opts.Attempts, func(ctx context.Context) (*providerv1.DeleteSecretResponse, error) {
		return c.stub.DeleteSecret(ctx, req)
	})
	return err
}

func (c *secretsClient) SecretExists(ctx context.Context, remoteKey string) (bool, error) {
	req := &providerv1.SecretExistsRequest{Target: c.target, RemoteKey: remoteKey}
	resp, err := invoke(ctx, c.remote.opts, c.remote.opts.Attempts, func(ctx context.Context) (*providerv1.SecretExistsResponse, error) {
		return c.stub.SecretExists(ctx, req)
	})
	if err != nil {
		return false, err
	}
	return resp.GetExists(), nil
}

// CheckAuth asks the provider to prove its credentials. A provider with
// nothing to check (Unimplemented) passes, as it does in process.
func (c *secretsClient) CheckAuth(ctx context.Context) error {
	req := &providerv1.CheckAuthRequest{Target: c.target}
	_, err := invoke(ctx, c.remote.opts, c.remote.opts.Attempts, func(ctx context.Context) (*providerv1.CheckAuthResponse, error) {
		return c.stub.CheckAuth(ctx, req)
	})
	if errors.Is(err, plugin.ErrNotSupported) {
		return nil
	}
	return err
}

func (c *secretsClient) Capabilities() plugin.Capabilities { return c.capabilities }

// Close gives the connection back; the provider process keeps no state per
// client.
func (c *secretsClient) Close(context.Context) error {
	c.closeOnce.Do(func() { c.remote.pool.release(c.conn) })
	return nil
}
