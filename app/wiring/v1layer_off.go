//go:build nov1

package wiring

import (
	"fmt"
	"io"

	"go.uber.org/fx"
)

// V1Layer is left out of builds with the tag nov1: ExternalSecrets naming an
// external-secrets.io/v1 store are told this build does not serve it.
func V1Layer() fx.Option { return fx.Options() }

// V1Served reports whether this build serves v1 stores.
const V1Served = false

// Migrate is `eso migrate`, which needs the v1 layer.
func Migrate(_ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "eso migrate: this eso is built without the v1 store layer (tag nov1); use a default build to migrate")
	return 2
}
