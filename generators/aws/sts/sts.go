// Package sts generates temporary AWS credentials with GetSessionToken
// (kind STSSessionToken), compiled in with the aws build tag.
package sts

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/sts"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/aws/awsauth"
	"github.com/eso-dev/eso/providers/plugin"
)

// Kind is the configuration kind this generator serves.
const Kind = "STSSessionToken"

// Registration wires the generator into binaries built with the aws tag.
// There is no Cleanup: AWS has no call that revokes one session token (only
// a deny policy on every session of the user), so the credentials live
// until they expire.
var Registration = plugin.Definition[*genv1.STSSessionToken]{
	Name: "sts-session-token", Kind: Kind,
	CheckCredentials: func(ctx context.Context, deps plugin.Deps, cfg *genv1.STSSessionToken, scope plugin.Scope) error {
		_, err := awsauth.Config(ctx, deps, connection(&cfg.Spec), scope)
		return err
	},
	Generate: generate,
}.Registration()

// generate calls GetSessionToken: access_key_id, secret_access_key,
// session_token and expiration (Unix seconds), as upstream's generator
// outputs them.
//
// AWS only issues session tokens to long-term credentials: with role set,
// GetSessionToken is refused.
func generate(ctx context.Context, deps plugin.Deps, cfg *genv1.STSSessionToken, scope plugin.Scope) (map[string][]byte, plugin.State, error) {
	session, err := awsauth.Session(ctx, deps, connection(&cfg.Spec), scope)
	if err != nil {
		return nil, nil, err
	}
	spec := &cfg.Spec
	input := &sts.GetSessionTokenInput{}
	if p := spec.RequestParameters; p != nil {
		input.DurationSeconds = p.SessionDuration
		input.SerialNumber = p.SerialNumber
		input.TokenCode = p.TokenCode
	}
	out, err := sts.NewFromConfig(session).GetSessionToken(ctx, input)
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

// connection is where and as whom to call: endpoint is STS itself here, so
// it also serves role assumption unless stsEndpoint says otherwise.
func connection(spec *genv1.STSSessionTokenSpec) *provv1.AWSSpec {
	c := awsauth.GeneratorSpec(&spec.AWSGeneratorSpec)
	if c.STSEndpoint == "" {
		c.STSEndpoint = c.Endpoint
	}
	return c
}
