package server

import (
	"context"

	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/plugin/wire"
)

// infoService answers Info: what this process serves and speaks.
type infoService struct {
	providerv1.UnimplementedInfoServer
	s *Server
}

// Handshake implements providerv1.InfoServer. It always answers: checking
// that the majors overlap is the client's job, which can then say why.
func (i *infoService) Handshake(context.Context, *providerv1.HandshakeRequest) (*providerv1.HandshakeResponse, error) {
	return &providerv1.HandshakeResponse{
		ProtocolMajors: []uint32{wire.ProtocolMajor},
		ProtocolMinor:  wire.ProtocolMinor,
		ServerVersion:  i.s.version,
		ProviderKinds:  i.s.ProviderKinds(),
		GeneratorKinds: i.s.GeneratorKinds(),
	}, nil
}

// secretStoreService answers SecretStoreProvider through cached clients.
type secretStoreService struct {
	providerv1.UnimplementedSecretStoreProviderServer
	s *Server
}

func (ss *secretStoreService) GetSecret(ctx context.Context, req *providerv1.GetSecretRequest) (*providerv1.GetSecretResponse, error) {
	resp := &providerv1.GetSecretResponse{}
	err := ss.s.withClient(ctx, req.GetTarget(), func(c plugin.SecretsClient) (err error) {
		resp.Value, err = c.GetSecret(ctx, wire.FromRemoteRef(req.GetRef()))
		return err
	})
	return orNil(resp, err)
}

func (ss *secretStoreService) GetSecretMap(ctx context.Context, req *providerv1.GetSecretRequest) (*providerv1.SecretMapResponse, error) {
	resp := &providerv1.SecretMapResponse{}
	err := ss.s.withClient(ctx, req.GetTarget(), func(c plugin.SecretsClient) (err error) {
		resp.Data, err = c.GetSecretMap(ctx, wire.FromRemoteRef(req.GetRef()))
		return err
	})
	return orNil(resp, err)
}

func (ss *secretStoreService) GetAllSecrets(ctx context.Context, req *providerv1.GetAllSecretsRequest) (*providerv1.SecretMapResponse, error) {
	resp := &providerv1.SecretMapResponse{}
	err := ss.s.withClient(ctx, req.GetTarget(), func(c plugin.SecretsClient) (err error) {
		resp.Data, err = c.GetAllSecrets(ctx, wire.FromFind(req.GetFind()))
		return err
	})
	return orNil(resp, err)
}

func (ss *secretStoreService) PushSecret(ctx context.Context, req *providerv1.PushSecretRequest) (*providerv1.PushSecretResponse, error) {
	err := ss.s.withClient(ctx, req.GetTarget(), func(c plugin.SecretsClient) error {
		return c.(plugin.Writer).PushSecret(ctx, plugin.PushRequest{RemoteKey: req.GetRemoteKey(), Property: req.GetProperty(), Value: req.GetValue(), Adopt: req.GetAdopt(), Metadata: req.GetMetadata()})
	})
	return orNil(&providerv1.PushSecretResponse{}, err)
}

func (ss *secretStoreService) DeleteSecret(ctx context.Context, req *providerv1.DeleteSecretRequest) (*providerv1.DeleteSecretResponse, error) {
	err := ss.s.withClient(ctx, req.GetTarget(), func(c plugin.SecretsClient) error {
		return c.(plugin.Writer).DeleteSecret(ctx, req.GetRemoteKey(), req.GetProperty())
	})
	return orNil(&providerv1.DeleteSecretResponse{}, err)
}

func (ss *secretStoreService) SecretExists(ctx context.Context, req *providerv1.SecretExistsRequest) (*providerv1.SecretExistsResponse, error) {
	resp := &providerv1.SecretExistsResponse{}
	err := ss.s.withClient(ctx, req.GetTarget(), func(c plugin.SecretsClient) error {
		var err error
		resp.Exists, err = c.(plugin.Writer).SecretExists(ctx, req.GetRemoteKey())
		return err
	})
	return orNil(resp, err)
}

// Validate checks the configuration without building a client, as core's
// store controller does in process. Its scope may be empty (a cluster store
// whose credentials namespace is decided per request).
func (ss *secretStoreService) Validate(ctx context.Context, req *providerv1.ValidateRequest) (*providerv1.ValidateResponse, error) {
	p, ref, scope, err := ss.s.provider(req.GetTarget(), false)
	if err != nil {
		return nil, err
	}
	return orNil(&providerv1.ValidateResponse{}, wire.ToStatus(p.provider.Validate(ctx, ref, scope)))
}

func (ss *secretStoreService) Capabilities(ctx context.Context, req *providerv1.CapabilitiesRequest) (*providerv1.CapabilitiesResponse, error) {
	resp := &providerv1.CapabilitiesResponse{}
	err := ss.s.withClient(ctx, req.GetTarget(), func(c plugin.SecretsClient) error {
		resp.Capabilities = string(c.Capabilities())
		_, resp.PropertiesAreJsonPaths = c.(plugin.JSONProperties)
		return nil
	})
	return orNil(resp, err)
}

// CheckAuth runs the client's credential check on the cached client, so it
// costs no extra login; a client without one has nothing to check.
func (ss *secretStoreService) CheckAuth(ctx context.Context, req *providerv1.CheckAuthRequest) (*providerv1.CheckAuthResponse, error) {
	err := ss.s.withClient(ctx, req.GetTarget(), func(c plugin.SecretsClient) error {
		return c.(plugin.AuthChecker).CheckAuth(ctx)
	})
	return orNil(&providerv1.CheckAuthResponse{}, err)
}

// generatorService answers GeneratorProvider. Generators keep no client:
// each call reads its configuration, as in process.
type generatorService struct {
	providerv1.UnimplementedGeneratorProviderServer
	s *Server
}

func (gs *generatorService) Generate(ctx context.Context, req *providerv1.GenerateRequest) (*providerv1.GenerateResponse, error) {
	g, ref, scope, err := gs.s.generator(req.GetTarget(), true)
	if err != nil {
		return nil, err
	}
	data, state, err := g.Generate(ctx, ref, scope)
	return orNil(&providerv1.GenerateResponse{Data: data, State: state}, wire.ToStatus(err))
}

func (gs *generatorService) Cleanup(ctx context.Context, req *providerv1.CleanupRequest) (*providerv1.CleanupResponse, error) {
	g, ref, scope, err := gs.s.generator(req.GetTarget(), true)
	if err != nil {
		return nil, err
	}
	err = g.Cleanup(ctx, ref, scope, plugin.State(req.GetState()))
	return orNil(&providerv1.CleanupResponse{}, wire.ToStatus(err))
}

func (gs *generatorService) ValidateGenerator(ctx context.Context, req *providerv1.ValidateRequest) (*providerv1.ValidateResponse, error) {
	g, ref, scope, err := gs.s.generator(req.GetTarget(), false)
	if err != nil {
		return nil, err
	}
	return orNil(&providerv1.ValidateResponse{}, wire.ToStatus(g.Validate(ctx, ref, scope)))
}

// orNil returns resp, or only err when there is one: a failed call sends no
// partial answer.
func orNil[T any](resp *T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	return resp, nil
}
