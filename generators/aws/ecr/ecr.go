// Package ecr generates logins for an account's ECR registry (kind
// ECRAuthorizationToken), compiled in with the aws build tag.
package ecr

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/aws-sdk-go-v2/service/ecrpublic"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/providers/aws/awsauth"
	"github.com/eso-dev/eso/providers/plugin"
)

// Kind is the configuration kind this generator serves.
const Kind = "ECRAuthorizationToken"

// Registration wires the generator into binaries built with the aws tag.
// There is no Cleanup: ECR has no way to revoke an authorization token, it
// expires (after 12 hours).
var Registration = plugin.Definition[*genv1.ECRAuthorizationToken]{
	Name: "ecr-authorization-token", Kind: Kind,
	Check: checkScope,
	CheckCredentials: func(ctx context.Context, deps plugin.Deps, cfg *genv1.ECRAuthorizationToken, scope plugin.Scope) error {
		_, err := awsauth.Config(ctx, deps, awsauth.GeneratorSpec(&cfg.Spec.AWSGeneratorSpec), scope)
		return err
	},
	Generate: generate,
}.Registration()

// generate calls GetAuthorizationToken: username, password, proxy_endpoint
// and expires_at (Unix seconds), as upstream's generator outputs them.
func generate(ctx context.Context, deps plugin.Deps, cfg *genv1.ECRAuthorizationToken, scope plugin.Scope) (map[string][]byte, plugin.State, error) {
	session, err := awsauth.Session(ctx, deps, awsauth.GeneratorSpec(&cfg.Spec.AWSGeneratorSpec), scope)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Spec.Scope == genv1.ECRScopePublic {
		return publicLogin(ctx, session)
	}
	out, err := ecr.NewFromConfig(session).GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{})
	if err != nil {
		return nil, nil, awsauth.APIError("getting an ECR authorization token", err)
	}
	if len(out.AuthorizationData) == 0 {
		return nil, nil, fmt.Errorf("getting an ECR authorization token: the answer holds none")
	}
	data := out.AuthorizationData[0]
	values, err := login("ECR", data.AuthorizationToken, data.ExpiresAt)
	if err != nil {
		return nil, nil, err
	}
	values["proxy_endpoint"] = []byte(aws.ToString(data.ProxyEndpoint))
	return values, nil, nil
}

// checkScope repeats the schema's rule, for objects that bypassed it: a
// scope eso does not know is refused, never read as private.
func checkScope(cfg *genv1.ECRAuthorizationToken) error {
	switch cfg.Spec.Scope {
	case "", genv1.ECRScopePrivate, genv1.ECRScopePublic:
		return nil
	}
	return fmt.Errorf("%w: scope %q (want private or public)", plugin.ErrInvalidConfig, cfg.Spec.Scope)
}

// publicRegion is where AWS serves ECR Public's login API.
const publicRegion = "us-east-1"

// publicLogin asks ECR Public for a login, in us-east-1 (or at the
// configured endpoint).
func publicLogin(ctx context.Context, session aws.Config) (map[string][]byte, plugin.State, error) {
	out, err := ecrpublic.NewFromConfig(session, func(o *ecrpublic.Options) { o.Region = publicRegion }).
		GetAuthorizationToken(ctx, &ecrpublic.GetAuthorizationTokenInput{})
	if err != nil {
		return nil, nil, awsauth.APIError("getting an ECR Public authorization token", err)
	}
	if out.AuthorizationData == nil {
		return nil, nil, fmt.Errorf("getting an ECR Public authorization token: the answer holds none")
	}
	values, err := login("ECR Public", out.AuthorizationData.AuthorizationToken, out.AuthorizationData.ExpiresAt)
	return values, nil, err
}

// login splits a registry token, base64 of "user:password", into username
// and password, with expires_at in Unix seconds when the answer has it.
// Errors say what is wrong with the token, never quote it.
func login(registry string, token *string, expires *time.Time) (map[string][]byte, error) {
	decoded, err := base64.StdEncoding.DecodeString(aws.ToString(token))
	if err != nil {
		return nil, fmt.Errorf("%s authorization token is not base64", registry)
	}
	username, password, ok := strings.Cut(string(decoded), ":")
	if !ok {
		return nil, fmt.Errorf("%s authorization token is not of the form user:password", registry)
	}
	values := map[string][]byte{"username": []byte(username), "password": []byte(password)}
	if expires != nil {
		values["expires_at"] = []byte(strconv.FormatInt(expires.Unix(), 10))
	}
	return values, nil
}
