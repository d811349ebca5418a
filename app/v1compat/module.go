package v1compat

import (
	"os"

	"go.uber.org/fx"
	"k8s.io/apimachinery/pkg/runtime"

	upgen "github.com/eso-dev/eso/apis/upstreamv1/generators"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
	"github.com/eso-dev/eso/app/stores"
)

// EndpointsFromEnv reads the endpoint overrides of v1 stores from the
// environment: upstream's AWS_SECRETSMANAGER_ENDPOINT, AWS_SSM_ENDPOINT and
// AWS_STS_ENDPOINT, and GCP_SECRETMANAGER_ENDPOINT.
func EndpointsFromEnv() Endpoints {
	return Endpoints{
		AWSSecretsManager: os.Getenv("AWS_SECRETSMANAGER_ENDPOINT"),
		AWSParameterStore: os.Getenv("AWS_SSM_ENDPOINT"),
		AWSSTS:            os.Getenv("AWS_STS_ENDPOINT"),
		GCPSecretManager:  os.Getenv("GCP_SECRETMANAGER_ENDPOINT"),
	}
}

// Module serves v1 stores and upstream's generator kinds: it registers
// their types, adds the store kinds to the stores every controller reads
// and watches, and the generator kinds to those generatorRefs resolve.
var Module = fx.Module("v1-stores",
	fx.Provide(
		EndpointsFromEnv,
		fx.Annotate(func() func(*runtime.Scheme) error { return v1stores.AddToScheme }, fx.ResultTags(`group:"scheme"`)),
		fx.Annotate(func() func(*runtime.Scheme) error { return upgen.AddToScheme }, fx.ResultTags(`group:"scheme"`)),
		fx.Annotate(GeneratorKinds, fx.ResultTags(`group:"upstreamgenerators,flatten"`)),
		fx.Annotate(func(e Endpoints) []stores.API { return APIs(e) }, fx.ResultTags(`group:"storeapis,flatten"`)),
	),
)
