// Package v1blocks reads blocks of upstream ESO's external-secrets.io/v1
// schema (apis/upstreamv1) as eso's provider configuration: the reference
// selectors every v1 provider block uses, and the Vault block, which
// upstream nests both in a v1 SecretStore and in a VaultDynamicSecret. It
// links no provider SDK, so the v1 store layer can use it in any build.
//
// A field eso cannot serve is refused with its path and what to write
// instead; a field accepted without effect is noted. What a reference's
// namespace field means depends on where the block is used, so the caller
// decides it (Findings.Namespace).
package v1blocks

import (
	provv2 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1"
)

// Findings receives what a translation finds, field by field.
type Findings interface {
	// Namespace is the namespace field of the reference at path (nil or
	// empty when it names none). The caller refuses what it may not read.
	Namespace(path string, ns *string)
	// Refuse records a field eso cannot serve, with why.
	Refuse(path, why string)
	// Note records a field accepted without effect, with why.
	Note(path, why string)
}

// Secret is a Secret key reference.
func Secret(f Findings, path string, sel upstreamv1.SecretKeySelector) provv2.SecretKeySelector {
	f.Namespace(path, sel.Namespace)
	if sel.Name == "" || sel.Key == "" {
		f.Refuse(path, "needs name and key")
	}
	return provv2.SecretKeySelector{Name: sel.Name, Key: sel.Key}
}

// OptionalSecret is Secret for a reference that may be absent.
func OptionalSecret(f Findings, path string, sel *upstreamv1.SecretKeySelector) *provv2.SecretKeySelector {
	if sel == nil {
		return nil
	}
	s := Secret(f, path, *sel)
	return &s
}

// ServiceAccount is a ServiceAccount whose token eso requests.
func ServiceAccount(f Findings, path string, sel upstreamv1.ServiceAccountSelector) provv2.KubernetesServiceAccount {
	f.Namespace(path, sel.Namespace)
	return provv2.KubernetesServiceAccount{Name: sel.Name, Audiences: sel.Audiences}
}

// CAProvider is a CA bundle read from a Secret or ConfigMap.
func CAProvider(f Findings, path string, ca *upstreamv1.CAProvider) *provv2.CAProvider {
	if ca == nil {
		return nil
	}
	f.Namespace(path, ca.Namespace)
	return &provv2.CAProvider{Type: string(ca.Type), Name: ca.Name, Key: ca.Key}
}
