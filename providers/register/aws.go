//go:build aws || !(gcp || vault || minimal)

package register

import (
	"github.com/eso-dev/eso/generators/aws/ecr"
	"github.com/eso-dev/eso/generators/aws/sts"
	"github.com/eso-dev/eso/providers/aws/parameterstore"
	"github.com/eso-dev/eso/providers/aws/secretsmanager"
)

func init() {
	selected = append(selected, "aws")
	sdkProviders = append(sdkProviders, secretsmanager.Registration, parameterstore.Registration)
	sdkGenerators = append(sdkGenerators, ecr.Registration, sts.Registration)
}
