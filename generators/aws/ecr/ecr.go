// Package ecr generates logins for an account's ECR registry (kind
// ECRAuthorizationToken), compiled in with the aws build tag.
package ecr

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/generators"
	"github.com/eso-dev/eso/generators/aws/awsconfig"
	"github.com/eso-dev/eso/providers"
	"github.com/eso-dev/eso/providers/aws/awsauth"
)

// Kind is the configuration kind this generator serves.
const Kind = "ECRAuthorizationToken"

// Registration wires the generator into binaries built with the aws tag.
var Registration = generators.Registration{
	Name:        "ecr-authorization-token",
	Kind:        Kind,
	AddToScheme: genv1.AddToScheme,
	NewConfig:   func() client.Object { return &genv1.ECRAuthorizationToken{} },
	New:         func(deps providers.Deps) generators.Generator { return &Generator{deps: deps} },
}

// Generator generates ECR registry logins.
type Generator struct{ deps providers.Deps }

// Kind implements generators.Generator.
func (g *Generator) Kind() string { return Kind }

// Generate implements generators.Generator with GetAuthorizationToken:
// username, password, proxy_endpoint and expires_at (Unix seconds), as
// upstream's generator outputs them. There is no state: ECR has no way to
// revoke an authorization token, it expires (after 12 hours).
func (g *Generator) Generate(ctx context.Context, ref providers.Ref, scope providers.Scope) (map[string][]byte, generators.State, error) {
	spec, err := g.read(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := awsconfig.Config(ctx, g.deps, &spec.AWSGeneratorSpec, scope)
	if err != nil {
		return nil, nil, err
	}
	api := ecr.NewFromConfig(cfg, func(o *ecr.Options) {
		if spec.Endpoint != "" {
			o.BaseEndpoint = aws.String(spec.Endpoint)
		}
	})
	out, err := api.GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{})
	if err != nil {
		return nil, nil, awsauth.APIError("getting an ECR authorization token", err)
	}
	if len(out.AuthorizationData) == 0 {
		return nil, nil, fmt.Errorf("getting an ECR authorization token: the answer holds none")
	}
	data := out.AuthorizationData[0]
	// The token is base64 of "user:password"; errors say so, never quote it.
	decoded, err := base64.StdEncoding.DecodeString(aws.ToString(data.AuthorizationToken))
	if err != nil {
		return nil, nil, fmt.Errorf("ECR authorization token is not base64")
	}
	username, password, ok := strings.Cut(string(decoded), ":")
	if !ok {
		return nil, nil, fmt.Errorf("ECR authorization token is not of the form user:password")
	}
	values := map[string][]byte{
		"username":       []byte(username),
		"password":       []byte(password),
		"proxy_endpoint": []byte(aws.ToString(data.ProxyEndpoint)),
	}
	if data.ExpiresAt != nil {
		values["expires_at"] = []byte(strconv.FormatInt(data.ExpiresAt.Unix(), 10))
	}
	return values, nil, nil
}

// Cleanup implements generators.Generator: ECR authorization tokens cannot
// be revoked, only expire, so there is never anything to do.
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
	_, err = awsconfig.Config(ctx, g.deps, &spec.AWSGeneratorSpec, scope)
	return err
}

func (g *Generator) read(ctx context.Context, ref providers.Ref) (*genv1.ECRAuthorizationTokenSpec, error) {
	var cfg genv1.ECRAuthorizationToken
	if err := providers.ReadConfig(ctx, g.deps.Client, ref, &cfg); err != nil {
		return nil, err
	}
	return &cfg.Spec, nil
}
