//go:build vault || !(aws || gcp || minimal)

package register

import "github.com/eso-dev/eso/providers/vault"

func init() {
	selected = append(selected, "vault")
	sdkProviders = append(sdkProviders, vault.Registration)
}
