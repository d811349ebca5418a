// Package awsauth builds the AWS credentials of an AWSSecretManager or
// AWSParameterStore configuration: static keys from a Secret, a ServiceAccount
// token exchanged for a role (web identity), or the SDK's default chain, each
// optionally followed by AssumeRole. Credentials are cached by the SDK until
// they expire, so refreshes do not log in again.
package awsauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"
	"github.com/aws/smithy-go"
	"sigs.k8s.io/controller-runtime/pkg/client"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// regionName is the shape of AWS region names (eu-central-1,
// us-gov-west-1, us-isob-east-1), as the schema checks it.
var regionName = regexp.MustCompile(`^[a-z]{2,4}(-[a-z]+)+-[0-9]{1,2}$`)

// stsAudience is the audience AWS expects in web identity tokens.
const stsAudience = "sts.amazonaws.com"

// Config returns an AWS configuration for spec, resolving credential
// references in scope.Namespace only.
func Config(ctx context.Context, deps plugin.Deps, spec *provv1.AWSSpec, scope plugin.Scope) (aws.Config, error) {
	if !regionName.MatchString(spec.Region) {
		// The schema says so too; this covers objects that bypassed it. An
		// unknown region would otherwise fail as an unreachable endpoint,
		// retried for ever.
		return aws.Config{}, fmt.Errorf("%w: region %q is not an AWS region name, such as eu-central-1", plugin.ErrInvalidConfig, spec.Region)
	}
	// Only eso's own identity comes from its environment (variables, shared
	// files, IRSA, instance role); a configuration with auth gets nothing of
	// it, not even an endpoint override.
	cfg := aws.Config{Region: spec.Region, HTTPClient: boundedHTTP{awshttp.NewBuildableClient()}}
	stsClient := func(c aws.Config) *sts.Client { return newSTS(c, spec) }
	switch {
	case spec.Auth != nil && spec.Auth.JWT != nil && spec.Role == "":
		// The schema says so too; this covers objects that bypassed it.
		return aws.Config{}, fmt.Errorf("%w: auth.jwt needs role: the role the ServiceAccount token is exchanged for", plugin.ErrInvalidConfig)
	case spec.Auth == nil || (spec.Auth.SecretRef == nil && spec.Auth.JWT == nil):
		if !deps.AmbientCredentials {
			return aws.Config{}, plugin.ErrNoAmbientCredentials
		}
		var err error
		if cfg, err = config.LoadDefaultConfig(ctx, config.WithRegion(spec.Region)); err != nil {
			return aws.Config{}, fmt.Errorf("loading AWS configuration: %w", err)
		}
		cfg.HTTPClient = boundedHTTP{cfg.HTTPClient}
	case spec.Auth.SecretRef != nil:
		creds, err := staticCredentials(ctx, deps.APIReader, spec.Auth.SecretRef, scope.Namespace)
		if err != nil {
			return aws.Config{}, err
		}
		cfg.Credentials = creds
	case spec.Auth.JWT != nil:
		sa := spec.Auth.JWT.ServiceAccountRef
		tokens := serviceAccountToken{c: deps.Client, namespace: scope.Namespace, name: sa.Name, audiences: audiences(sa.Audiences)}
		// The role is the one the token is exchanged for; no second AssumeRole.
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewWebIdentityRoleProvider(stsClient(cfg), spec.Role, tokens))
		return cfg, nil
	}
	if spec.Role != "" {
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(stsClient(cfg), spec.Role, func(o *stscreds.AssumeRoleOptions) {
			o.RoleSessionName = "eso"
			if spec.ExternalID != "" {
				o.ExternalID = aws.String(spec.ExternalID)
			}
			for _, t := range spec.SessionTags {
				o.Tags = append(o.Tags, ststypes.Tag{Key: aws.String(t.Key), Value: aws.String(t.Value)})
			}
		}))
	}
	return cfg, nil
}

// boundedHTTP reads at most plugin.MaxResponseBytes of any answer:
// endpoint and stsEndpoint may name a server a tenant runs. It wraps the
// SDK's own client, which the SDK configures further (a CA bundle from
// eso's environment needs it).
type boundedHTTP struct{ aws.HTTPClient }

func (c boundedHTTP) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.HTTPClient.Do(req)
	if err == nil {
		kit.LimitResponse(resp, plugin.MaxResponseBytes)
	}
	return resp, err
}

func audiences(a []string) []string {
	if len(a) == 0 {
		return []string{stsAudience}
	}
	return a
}

// staticCredentials reads access keys from Secrets of namespace. Errors name
// the Secret and key, never their content.
func staticCredentials(ctx context.Context, r client.Reader, ref *provv1.AWSAuthSecretRef, namespace string) (aws.CredentialsProvider, error) {
	id, err := secretValue(ctx, r, namespace, ref.AccessKeyID)
	if err != nil {
		return nil, err
	}
	secret, err := secretValue(ctx, r, namespace, ref.SecretAccessKey)
	if err != nil {
		return nil, err
	}
	var session string
	if ref.SessionToken != nil {
		if session, err = secretValue(ctx, r, namespace, *ref.SessionToken); err != nil {
			return nil, err
		}
	}
	return aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, session)), nil
}

func secretValue(ctx context.Context, r client.Reader, namespace string, sel provv1.SecretKeySelector) (string, error) {
	v, err := kit.CredentialValue(ctx, r, namespace, sel.Name, sel.Key)
	return strings.TrimSpace(string(v)), err
}

// serviceAccountToken requests ServiceAccount tokens for web identity.
type serviceAccountToken struct {
	c               client.Client
	namespace, name string
	audiences       []string
}

// GetIdentityToken implements stscreds.IdentityTokenRetriever. The SDK gives
// it no context, so it bounds the request itself.
func (t serviceAccountToken) GetIdentityToken() ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	token, _, err := kit.ServiceAccountToken(ctx, t.c, t.namespace, t.name, t.audiences, 10*time.Minute)
	return []byte(token), err
}

func newSTS(cfg aws.Config, spec *provv1.AWSSpec) *sts.Client {
	return sts.NewFromConfig(cfg, func(o *sts.Options) {
		if spec.STSEndpoint != "" {
			o.BaseEndpoint = aws.String(spec.STSEndpoint)
		}
	})
}

// CheckAuth proves that AWS accepts a client's credentials by running probe,
// a cheap read of the service itself (not STS: clusters that reach AWS
// through VPC endpoints may have no route to STS). Access denied still proves
// the identity, so only a refusal of the credentials fails the check.
func CheckAuth(ctx context.Context, probe func(context.Context) error) error {
	err := probe(ctx)
	var apiErr smithy.APIError
	if err == nil || errors.As(err, &apiErr) && isAccessDenied(apiErr.ErrorCode()) && !fromSTS(err) {
		return nil
	}
	return Classify(fmt.Errorf("checking AWS credentials: %w", err))
}

// APIError describes a failed AWS call ("reading secret \"db\"") with the AWS
// error code and message, never a value, classified as Classify does.
func APIError(what string, err error) error {
	return Classify(fmt.Errorf("%s: %w", what, err))
}

// authErrorCodes are the AWS error codes that mean the credentials themselves
// were not accepted: unknown, malformed, expired or revoked.
var authErrorCodes = map[string]bool{
	"InvalidClientTokenId":        true,
	"UnrecognizedClientException": true,
	"InvalidAccessKeyId":          true,
	"SignatureDoesNotMatch":       true,
	"InvalidSignatureException":   true,
	"IncompleteSignature":         true,
	"MissingAuthenticationToken":  true,
	"ExpiredToken":                true,
	"ExpiredTokenException":       true,
	"InvalidIdentityToken":        true,
	"IDPRejectedClaim":            true,
	"AuthFailure":                 true,
}

// Classify wraps an AWS error so core can tell a refused identity
// (plugin.ErrAuthFailed) from a missing permission (plugin.ErrOutOfScope).
// A 401 or 403 whose code the SDK cannot read is a refused identity.
// Throttling, 5xx and network errors pass through unchanged: they are
// transient and say so in their message. A refusal by STS while obtaining
// credentials (AssumeRole, web identity) is an authentication failure even
// when its code is AccessDenied: the role did not accept eso's identity.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() == "UnknownError" {
		// No readable code: a 401 or 403 cannot be access denied (AWS would
		// say so), so it is the credentials themselves.
		var resp *awshttp.ResponseError
		if errors.As(err, &resp) && (resp.HTTPStatusCode() == http.StatusUnauthorized || resp.HTTPStatusCode() == http.StatusForbidden) {
			return fmt.Errorf("%w: AWS refused the credentials: %w", plugin.ErrAuthFailed, err)
		}
		return err
	}
	code := apiErr.ErrorCode()
	switch {
	case authErrorCodes[code], isAccessDenied(code) && fromSTS(err):
		return fmt.Errorf("%w: %w", plugin.ErrAuthFailed, err)
	case isAccessDenied(code):
		return fmt.Errorf("%w: %w", plugin.ErrOutOfScope, err)
	}
	return err
}

func isAccessDenied(code string) bool {
	return code == "AccessDenied" || code == "AccessDeniedException"
}

// fromSTS reports whether any operation in err's chain was an STS call.
func fromSTS(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if op, ok := e.(*smithy.OperationError); ok && op.ServiceID == "STS" {
			return true
		}
	}
	return false
}
