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

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/generators"
	"github.com/eso-dev/eso/providers"
	"github.com/eso-dev/eso/providers/aws/awsauth"
	"github.com/eso-dev/eso/providers/kit"
)

// Kind is the configuration kind this generator serves.
const Kind = "ECRAuthorizationToken"

// Registration wires the generator into binaries built with the aws tag.
// There is no Cleanup: ECR has no way to revoke an authorization token, it
// expires (after 12 hours).
var Registration = kit.GeneratorDefinition[*genv1.ECRAuthorizationToken]{
	Name:        "ecr-authorization-token",
	Kind:        Kind,
	AddToScheme: genv1.AddToScheme,
	NewConfig:   func() *genv1.ECRAuthorizationToken { return &genv1.ECRAuthorizationToken{} },
	CheckCredentials: func(ctx context.Context, deps providers.Deps, cfg *genv1.ECRAuthorizationToken, scope providers.Scope) error {
		_, err := awsauth.Config(ctx, deps, awsauth.GeneratorSpec(&cfg.Spec.AWSGeneratorSpec), scope)
		return err
	},
	Generate: generate,
}.Registration()

// generate calls GetAuthorizationToken: username, password, proxy_endpoint
// and expires_at (Unix seconds), as upstream's generator outputs them.
func generate(ctx context.Context, deps providers.Deps, cfg *genv1.ECRAuthorizationToken, scope providers.Scope) (map[string][]byte, generators.State, error) {
	session, err := awsauth.Session(ctx, deps, awsauth.GeneratorSpec(&cfg.Spec.AWSGeneratorSpec), scope)
	if err != nil {
		return nil, nil, err
	}
	out, err := ecr.NewFromConfig(session).GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{})
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
