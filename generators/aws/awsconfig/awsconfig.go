// Package awsconfig gives the AWS generators their AWS configuration, with
// the AWS providers' credential code (awsauth): static keys from a Secret,
// a ServiceAccount token exchanged for a role, or eso's own identity when
// allowed, each optionally followed by AssumeRole.
package awsconfig

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers"
	"github.com/eso-dev/eso/providers/aws/awsauth"
)

// Config returns the AWS configuration of spec, resolving credential
// references in scope.Namespace only. Static keys are read here, so a
// missing Secret or key fails at once; nothing is sent to AWS before the
// first call.
func Config(ctx context.Context, deps providers.Deps, spec *genv1.AWSGeneratorSpec, scope providers.Scope) (aws.Config, error) {
	if spec.Auth != nil && spec.Auth.JWT != nil && spec.Role == "" {
		// The schema says so too; this covers objects that bypassed it.
		return aws.Config{}, fmt.Errorf("%w: auth.jwt needs role: the role the ServiceAccount token is exchanged for", providers.ErrInvalidConfig)
	}
	return awsauth.Config(ctx, deps, &provv1.AWSSpec{
		Region:      spec.Region,
		Role:        spec.Role,
		Auth:        spec.Auth,
		Endpoint:    spec.Endpoint,
		STSEndpoint: spec.STSEndpoint,
	}, scope)
}

// CallError describes a failed AWS call as awsauth.APIError does. A 401 or
// 403 whose error code the SDK could not read counts as refused
// credentials, as in awsauth.CheckAuth: AWS says AccessDenied when it means
// a missing permission.
func CallError(what string, err error) error {
	classified := awsauth.APIError(what, err)
	if errors.Is(classified, providers.ErrAuthFailed) || errors.Is(classified, providers.ErrOutOfScope) {
		return classified
	}
	var resp *awshttp.ResponseError
	var apiErr smithy.APIError
	unreadable := !errors.As(err, &apiErr) || apiErr.ErrorCode() == "UnknownError"
	if errors.As(err, &resp) && unreadable &&
		(resp.HTTPStatusCode() == http.StatusUnauthorized || resp.HTTPStatusCode() == http.StatusForbidden) {
		return fmt.Errorf("%w: AWS refused the credentials: %w", providers.ErrAuthFailed, classified)
	}
	return classified
}
