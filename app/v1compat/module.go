package v1compat

import (
	"os"

	"go.uber.org/fx"
	"k8s.io/apimachinery/pkg/runtime"

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

// Module serves v1 stores: it registers their types and adds their kinds
// to the stores every controller reads and watches.
var Module = fx.Module("v1-stores",
	fx.Provide(
		EndpointsFromEnv,
		fx.Annotate(func() func(*runtime.Scheme) error { return v1stores.AddToScheme }, fx.ResultTags(`group:"scheme"`)),
		fx.Annotate(func(e Endpoints) []stores.API { return APIs(e) }, fx.ResultTags(`group:"storeapis,flatten"`)),
	),
)
