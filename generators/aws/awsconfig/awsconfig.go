// Package awsconfig gives the AWS generators their AWS configuration, with
// the AWS providers' credential code (awsauth): static keys from a Secret,
// a ServiceAccount token exchanged for a role, or eso's own identity when
// allowed, each optionally followed by AssumeRole.
package awsconfig

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

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
	return awsauth.Config(ctx, deps, &provv1.AWSSpec{
		Region:      spec.Region,
		Role:        spec.Role,
		Auth:        spec.Auth,
		STSEndpoint: spec.STSEndpoint,
	}, scope)
}
