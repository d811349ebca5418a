//go:build !nov1

package app

import (
	"go.uber.org/fx"

	"github.com/eso-dev/eso/app/v1compat"
)

// v1Layer serves upstream's external-secrets.io/v1 stores; a build with the
// tag nov1 leaves it out.
func v1Layer() fx.Option { return v1compat.Module }

// V1Served reports whether this build serves v1 stores.
const V1Served = true
