package v1compat

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	upgen "github.com/eso-dev/eso/apis/upstreamv1/generators"
	"github.com/eso-dev/eso/app/generation"
)

// Upstream's generator kinds carry eso's kinds' specs (the apis tests hold
// the schemas equal), so translating one is copying its spec into eso's
// kind of the same name. The one change: upstream's MFA ignores
// spec.algorithm and always uses SHA-1, and so does eso for upstream's kind,
// so a token a service accepted from upstream it accepts from eso.

// GeneratorKinds are upstream's generator kinds, translated into eso's.
func GeneratorKinds() []generation.UpstreamKind {
	return []generation.UpstreamKind{
		namespaced("Password", func(o *upgen.Password) client.Object { return &genv1.Password{ObjectMeta: o.ObjectMeta, Spec: o.Spec} }),
		namespaced("UUID", func(o *upgen.UUID) client.Object { return &genv1.UUID{ObjectMeta: o.ObjectMeta, Spec: o.Spec} }),
		namespaced("ECRAuthorizationToken", func(o *upgen.ECRAuthorizationToken) client.Object {
			return &genv1.ECRAuthorizationToken{ObjectMeta: o.ObjectMeta, Spec: o.Spec}
		}),
		namespaced("STSSessionToken", func(o *upgen.STSSessionToken) client.Object {
			return &genv1.STSSessionToken{ObjectMeta: o.ObjectMeta, Spec: o.Spec}
		}),
		namespaced("GCRAccessToken", func(o *upgen.GCRAccessToken) client.Object {
			return &genv1.GCRAccessToken{ObjectMeta: o.ObjectMeta, Spec: o.Spec}
		}),
		namespaced("VaultDynamicSecret", func(o *upgen.VaultDynamicSecret) client.Object {
			return &genv1.VaultDynamicSecret{ObjectMeta: o.ObjectMeta, Spec: o.Spec}
		}),
		namespaced("SSHKey", func(o *upgen.SSHKey) client.Object { return &genv1.SSHKey{ObjectMeta: o.ObjectMeta, Spec: o.Spec} }),
		namespaced("Fake", func(o *upgen.Fake) client.Object { return &genv1.Fake{ObjectMeta: o.ObjectMeta, Spec: o.Spec} }),
		namespaced("MFA", func(o *upgen.MFA) client.Object {
			return &genv1.MFA{ObjectMeta: o.ObjectMeta, Spec: upstreamMFA(o.Spec)}
		}),
		{Kind: "ClusterGenerator", Cluster: true, New: func() client.Object { return &upgen.ClusterGenerator{} },
			Translate: func(obj client.Object) (string, client.Object, error) {
				return ClusterGenerator(obj.(*upgen.ClusterGenerator))
			}},
	}
}

// namespaced is the UpstreamKind of a namespaced kind T, translated by to.
func namespaced[T any, P interface {
	*T
	client.Object
}](kind string, to func(P) client.Object) generation.UpstreamKind {
	return generation.UpstreamKind{Kind: kind, New: func() client.Object { return P(new(T)) },
		Translate: func(obj client.Object) (string, client.Object, error) { return kind, to(obj.(P)), nil }}
}

// upstreamMFA is an MFA spec as upstream reads it: SHA-1 whatever
// spec.algorithm says.
func upstreamMFA(spec genv1.MFASpec) genv1.MFASpec {
	spec.Algorithm = ""
	return spec
}

// ClusterGenerator is the eso kind and configuration an upstream
// ClusterGenerator stands for: its spec.kind, with the member of
// spec.generator of that kind. The configuration has the
// ClusterGenerator's name and no namespace.
func ClusterGenerator(cg *upgen.ClusterGenerator) (string, client.Object, error) {
	g := cg.Spec.Generator
	var cfg client.Object
	switch cg.Spec.Kind {
	case "Password":
		cfg = member(g.PasswordSpec, func(s genv1.PasswordSpec) client.Object { return &genv1.Password{Spec: s} })
	case "UUID":
		cfg = member(g.UUIDSpec, func(s genv1.UUIDSpec) client.Object { return &genv1.UUID{Spec: s} })
	case "ECRAuthorizationToken":
		cfg = member(g.ECRAuthorizationTokenSpec, func(s genv1.ECRAuthorizationTokenSpec) client.Object { return &genv1.ECRAuthorizationToken{Spec: s} })
	case "STSSessionToken":
		cfg = member(g.STSSessionTokenSpec, func(s genv1.STSSessionTokenSpec) client.Object { return &genv1.STSSessionToken{Spec: s} })
	case "GCRAccessToken":
		cfg = member(g.GCRAccessTokenSpec, func(s genv1.GCRAccessTokenSpec) client.Object { return &genv1.GCRAccessToken{Spec: s} })
	case "VaultDynamicSecret":
		cfg = member(g.VaultDynamicSecretSpec, func(s genv1.VaultDynamicSecretSpec) client.Object { return &genv1.VaultDynamicSecret{Spec: s} })
	case "SSHKey":
		cfg = member(g.SSHKeySpec, func(s genv1.SSHKeySpec) client.Object { return &genv1.SSHKey{Spec: s} })
	case "Fake":
		cfg = member(g.FakeSpec, func(s genv1.FakeSpec) client.Object { return &genv1.Fake{Spec: s} })
	case "MFA":
		cfg = member(g.MFASpec, func(s genv1.MFASpec) client.Object { return &genv1.MFA{Spec: upstreamMFA(s)} })
	default:
		return "", nil, fmt.Errorf("ClusterGenerator kind %s is not one eso ships", cg.Spec.Kind)
	}
	if cfg == nil {
		return "", nil, fmt.Errorf("ClusterGenerator of kind %s has no spec.generator member for it", cg.Spec.Kind)
	}
	cfg.SetName(cg.Name)
	cfg.SetUID(cg.UID)
	return string(cg.Spec.Kind), cfg, nil
}

// member is the configuration of a spec.generator member, nil when unset.
func member[S any](spec *S, to func(S) client.Object) client.Object {
	if spec == nil {
		return nil
	}
	return to(*spec)
}
