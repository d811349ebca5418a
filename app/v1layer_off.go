//go:build nov1

package app

import "go.uber.org/fx"

// v1Layer is left out of builds with the tag nov1: ExternalSecrets naming an
// external-secrets.io/v1 store are told this build does not serve it.
func v1Layer() fx.Option { return fx.Options() }

// V1Served reports whether this build serves v1 stores.
const V1Served = false
