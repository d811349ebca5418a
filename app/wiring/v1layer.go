//go:build !nov1

package wiring

import (
	"io"

	"go.uber.org/fx"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/v1compat"
	"github.com/eso-dev/eso/app/v1compat/migrate"
)

// V1Layer serves upstream's external-secrets.io/v1 stores; a build with the
// tag nov1 leaves it out.
func V1Layer() fx.Option { return v1compat.Module }

// V1Served reports whether this build serves v1 stores.
const V1Served = true

// Migrate is `eso migrate`: v1 stores to v2alpha1 stores (see package migrate).
func Migrate(args []string, stdout, stderr io.Writer) int {
	return migrate.Run(args, stdout, stderr, func(kubeconfig string, scheme *runtime.Scheme) (client.Client, error) {
		rc, err := manager.RESTConfig(config.Config{Kubeconfig: kubeconfig})
		if err != nil {
			return nil, err
		}
		return client.New(rc, client.Options{Scheme: scheme})
	})
}
