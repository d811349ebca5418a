// Package upstreamv1 holds the parts of upstream ESO's external-secrets.io/v1
// schema that more than one eso kind embeds: the reference selectors and the
// Vault provider block. Upstream nests the same Vault block in a v1
// SecretStore (spec.provider.vault) and in a VaultDynamicSecret
// (spec.provider), so both read it from here. It registers no kind: the
// types are building blocks, and a build without the v1 store layer (tag
// nov1) still links them for VaultDynamicSecret.
// +kubebuilder:object:generate=true
package upstreamv1
