package faultprovider

import (
	"context"

	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
)

// The forwarders pass each call to eso's provider-mode server unchanged, so
// answers (values, statuses and their contract reasons) are exactly that
// server's; faults are added in front of them by the interceptor.

type infoForwarder struct {
	providerv1.UnsafeInfoServer
	to providerv1.InfoClient
}

func (f infoForwarder) Handshake(ctx context.Context, r *providerv1.HandshakeRequest) (*providerv1.HandshakeResponse, error) {
	return f.to.Handshake(ctx, r)
}

type storeForwarder struct {
	providerv1.UnsafeSecretStoreProviderServer
	to providerv1.SecretStoreProviderClient
}

func (f storeForwarder) GetSecret(ctx context.Context, r *providerv1.GetSecretRequest) (*providerv1.GetSecretResponse, error) {
	return f.to.GetSecret(ctx, r)
}

func (f storeForwarder) GetSecretMap(ctx context.Context, r *providerv1.GetSecretRequest) (*providerv1.SecretMapResponse, error) {
	return f.to.GetSecretMap(ctx, r)
}

func (f storeForwarder) GetAllSecrets(ctx context.Context, r *providerv1.GetAllSecretsRequest) (*providerv1.SecretMapResponse, error) {
	return f.to.GetAllSecrets(ctx, r)
}

func (f storeForwarder) PushSecret(ctx context.Context, r *providerv1.PushSecretRequest) (*providerv1.PushSecretResponse, error) {
	return f.to.PushSecret(ctx, r)
}

func (f storeForwarder) DeleteSecret(ctx context.Context, r *providerv1.DeleteSecretRequest) (*providerv1.DeleteSecretResponse, error) {
	return f.to.DeleteSecret(ctx, r)
}

func (f storeForwarder) SecretExists(ctx context.Context, r *providerv1.SecretExistsRequest) (*providerv1.SecretExistsResponse, error) {
	return f.to.SecretExists(ctx, r)
}

func (f storeForwarder) Validate(ctx context.Context, r *providerv1.ValidateRequest) (*providerv1.ValidateResponse, error) {
	return f.to.Validate(ctx, r)
}

func (f storeForwarder) Capabilities(ctx context.Context, r *providerv1.CapabilitiesRequest) (*providerv1.CapabilitiesResponse, error) {
	return f.to.Capabilities(ctx, r)
}

func (f storeForwarder) CheckAuth(ctx context.Context, r *providerv1.CheckAuthRequest) (*providerv1.CheckAuthResponse, error) {
	return f.to.CheckAuth(ctx, r)
}

type generatorForwarder struct {
	providerv1.UnsafeGeneratorProviderServer
	to providerv1.GeneratorProviderClient
}

func (f generatorForwarder) Generate(ctx context.Context, r *providerv1.GenerateRequest) (*providerv1.GenerateResponse, error) {
	return f.to.Generate(ctx, r)
}

func (f generatorForwarder) Cleanup(ctx context.Context, r *providerv1.CleanupRequest) (*providerv1.CleanupResponse, error) {
	return f.to.Cleanup(ctx, r)
}

func (f generatorForwarder) ValidateGenerator(ctx context.Context, r *providerv1.ValidateRequest) (*providerv1.ValidateResponse, error) {
	return f.to.ValidateGenerator(ctx, r)
}
