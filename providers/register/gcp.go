//go:build gcp || !(aws || vault || minimal)

package register

import (
	"github.com/eso-dev/eso/generators/gcp/gcr"
	"github.com/eso-dev/eso/providers/gcp/secretmanager"
)

func init() {
	selected = append(selected, "gcp")
	sdkProviders = append(sdkProviders, secretmanager.Registration)
	sdkGenerators = append(sdkGenerators, gcr.Registration)
}
