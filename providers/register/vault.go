//go:build vault || !(aws || gcp || minimal)

package register

import (
	vaultgenerator "github.com/eso-dev/eso/generators/vault"
	"github.com/eso-dev/eso/providers/vault"
)

func init() {
	selected = append(selected, "vault")
	sdkProviders = append(sdkProviders, vault.Registration)
	sdkGenerators = append(sdkGenerators, vaultgenerator.Registration)
}
