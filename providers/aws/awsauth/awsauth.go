// Package awsauth builds the AWS credentials of an AWSSecretManager or
// AWSParameterStore configuration: static keys from a Secret, a ServiceAccount
// token exchanged for a role (web identity), or the SDK's default chain, each
// optionally followed by AssumeRole. Credentials are cached by the SDK until
// they expire, so refreshes do not log in again.
package awsauth

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers"
)

// stsAudience is the audience AWS expects in web identity tokens.
const stsAudience = "sts.amazonaws.com"

// Config returns an AWS configuration for spec, resolving credential
// references in scope.Namespace only.
func Config(ctx context.Context, deps providers.Deps, spec *provv1.AWSSpec, scope providers.Scope) (aws.Config, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(spec.Region))
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading AWS configuration: %w", err)
	}
	stsClient := func(c aws.Config) *sts.Client {
		return sts.NewFromConfig(c, func(o *sts.Options) {
			if spec.STSEndpoint != "" {
				o.BaseEndpoint = aws.String(spec.STSEndpoint)
			}
		})
	}
	switch {
	case spec.Auth == nil || (spec.Auth.SecretRef == nil && spec.Auth.JWT == nil):
		if !deps.AmbientCredentials {
			return aws.Config{}, providers.ErrNoAmbientCredentials
		}
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
	v, err := providers.CredentialValue(ctx, r, namespace, sel.Name, sel.Key)
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
	token, _, err := providers.ServiceAccountToken(ctx, t.c, t.namespace, t.name, t.audiences, 10*time.Minute)
	return []byte(token), err
}
