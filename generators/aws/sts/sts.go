// Package sts generates temporary AWS credentials with GetSessionToken
// (kind STSSessionToken), compiled in with the aws build tag.
package sts

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"sigs.k8s.io/controller-runtime/pkg/client"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/generators"
	"github.com/eso-dev/eso/generators/aws/awsconfig"
	"github.com/eso-dev/eso/providers"
	"github.com/eso-dev/eso/providers/aws/awsauth"
)

// Kind is the configuration kind this generator serves.
const Kind = "STSSessionToken"

// Registration wires the generator into binaries built with the aws tag.
var Registration = generators.Registration{
	Name:        "sts-session-token",
	Kind:        Kind,
	AddToScheme: genv1.AddToScheme,
	NewConfig:   func() client.Object { return &genv1.STSSessionToken{} },
	New:         func(deps providers.Deps) generators.Generator { return &Generator{deps: deps} },
}

// Generator generates STS session tokens.
type Generator struct{ deps providers.Deps }

// Kind implements generators.Generator.
func (g *Generator) Kind() string { return Kind }

// Generate implements generators.Generator: access_key_id,
// secret_access_key, session_token and expiration (Unix seconds), as
// upstream's generator outputs them. There is no state: AWS has no call
// that revokes one session token (only a deny policy on every session of
// the user), so the credentials live until they expire.
//
// AWS only issues session tokens to long-term credentials: with role set,
// GetSessionToken is refused.
func (g *Generator) Generate(ctx context.Context, ref providers.Ref, scope providers.Scope) (map[string][]byte, generators.State, error) {
	spec, err := g.read(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := awsconfig.Config(ctx, g.deps, connection(spec), scope)
	if err != nil {
		return nil, nil, err
	}
	api := sts.NewFromConfig(cfg, func(o *sts.Options) {
		if spec.Endpoint != "" {
			o.BaseEndpoint = aws.String(spec.Endpoint)
		}
	})
	input := &sts.GetSessionTokenInput{}
	if p := spec.RequestParameters; p != nil {
		input.DurationSeconds = p.SessionDuration
		input.SerialNumber = p.SerialNumber
		input.TokenCode = p.TokenCode
	}
	out, err := api.GetSessionToken(ctx, input)
	if err != nil {
		return nil, nil, awsauth.APIError("getting an STS session token", err)
	}
	c := out.Credentials
	if c == nil || c.AccessKeyId == nil || c.SecretAccessKey == nil || c.SessionToken == nil {
		return nil, nil, fmt.Errorf("getting an STS session token: the answer holds no complete credentials")
	}
	values := map[string][]byte{
		"access_key_id":     []byte(*c.AccessKeyId),
		"secret_access_key": []byte(*c.SecretAccessKey),
		"session_token":     []byte(*c.SessionToken),
	}
	if c.Expiration != nil {
		values["expiration"] = []byte(strconv.FormatInt(c.Expiration.Unix(), 10))
	}
	return values, nil, nil
}

// Cleanup implements generators.Generator: session tokens cannot be
// revoked one by one, so there is never anything to do.
func (g *Generator) Cleanup(context.Context, providers.Ref, providers.Scope, generators.State) error {
	return nil
}

// Validate implements generators.Generator: the configuration and its
// credential references resolve; nothing is sent to AWS.
func (g *Generator) Validate(ctx context.Context, ref providers.Ref, scope providers.Scope) error {
	spec, err := g.read(ctx, ref)
	if err != nil || scope.Namespace == "" {
		return err
	}
	_, err = awsconfig.Config(ctx, g.deps, connection(spec), scope)
	return err
}

// connection is where and as whom to call: endpoint is STS itself here, so
// it also serves role assumption unless stsEndpoint says otherwise.
func connection(spec *genv1.STSSessionTokenSpec) *genv1.AWSGeneratorSpec {
	c := spec.AWSGeneratorSpec
	if c.STSEndpoint == "" {
		c.STSEndpoint = c.Endpoint
	}
	return &c
}

func (g *Generator) read(ctx context.Context, ref providers.Ref) (*genv1.STSSessionTokenSpec, error) {
	var cfg genv1.STSSessionToken
	if err := providers.ReadConfig(ctx, g.deps.Client, ref, &cfg); err != nil {
		return nil, err
	}
	return &cfg.Spec, nil
}
