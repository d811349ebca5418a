package v1blocks

import (
	"strings"

	provv2 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1"
)

// VaultConnection reads the connection and login of a Vault block at path
// at (server, namespace, TLS trust, auth): what a v1 store and a
// VaultDynamicSecret share. The KV settings (path, version, checkAndSet,
// readYourWrites) are the caller's: they mean something only to a store.
func VaultConnection(f Findings, at string, p *upstreamv1.VaultProvider) provv2.VaultSpec {
	spec := provv2.VaultSpec{Server: p.Server, CABundle: p.CABundle, CAProvider: CAProvider(f, at+".caProvider", p.CAProvider)}
	if !strings.HasPrefix(p.Server, "https://") && !strings.HasPrefix(p.Server, "http://") {
		f.Refuse(at+".server", "must be an http:// or https:// address")
	}
	if p.Namespace != nil {
		spec.Namespace = *p.Namespace
	}
	if p.ClientTLS.CertSecretRef != nil || p.ClientTLS.KeySecretRef != nil {
		f.Refuse(at+".tls", "client certificates for the connection to Vault are not supported; authenticate with auth.cert")
	}
	if len(p.Headers) > 0 {
		f.Refuse(at+".headers", "extra request headers are not supported")
	}
	if p.Auth == nil {
		f.Refuse(at+".auth", "eso needs an authentication method")
		return spec
	}
	spec.Auth = vaultAuth(f, at+".auth", p.Auth)
	return spec
}

// vaultMethods are upstream's login methods in the order upstream tries
// them: the first one set is used.
var vaultMethods = []struct {
	name string
	set  func(*upstreamv1.VaultAuth) bool
}{
	{"tokenSecretRef", func(a *upstreamv1.VaultAuth) bool { return a.TokenSecretRef != nil }},
	{"appRole", func(a *upstreamv1.VaultAuth) bool { return a.AppRole != nil }},
	{"kubernetes", func(a *upstreamv1.VaultAuth) bool { return a.Kubernetes != nil }},
	{"ldap", func(a *upstreamv1.VaultAuth) bool { return a.Ldap != nil }},
	{"userPass", func(a *upstreamv1.VaultAuth) bool { return a.UserPass != nil }},
	{"jwt", func(a *upstreamv1.VaultAuth) bool { return a.Jwt != nil }},
	{"cert", func(a *upstreamv1.VaultAuth) bool { return a.Cert != nil }},
	{"iam", func(a *upstreamv1.VaultAuth) bool { return a.Iam != nil }},
	{"gcp", func(a *upstreamv1.VaultAuth) bool { return a.GCP != nil }},
}

// vaultAuth reads the login method: the first set in upstream's order, the
// others noted as not used; the methods eso does not serve are refused by
// name.
func vaultAuth(f Findings, at string, a *upstreamv1.VaultAuth) provv2.VaultAuth {
	var auth provv2.VaultAuth
	used := ""
	for _, m := range vaultMethods {
		switch {
		case !m.set(a):
		case used == "":
			used = m.name
		default:
			f.Note(at+"."+m.name, "not used: "+used+" takes precedence, as upstream")
		}
	}
	if used == "" {
		f.Refuse(at, "eso needs an authentication method")
	}
	if a.Namespace != nil && *a.Namespace != "" {
		f.Refuse(at+".namespace", "logging in to another Vault namespace than the provider's namespace is not supported")
	}
	switch used {
	case "ldap", "userPass", "iam", "gcp":
		f.Refuse(at+"."+used, "not supported; use tokenSecretRef, appRole, kubernetes, jwt.kubernetesServiceAccountToken or cert")
	case "tokenSecretRef":
		auth.TokenSecretRef = OptionalSecret(f, at+".tokenSecretRef", a.TokenSecretRef)
	case "appRole":
		r := a.AppRole
		if r.RoleRef != nil {
			f.Refuse(at+".appRole.roleRef", "write the role ID in roleId")
		}
		auth.AppRole = &provv2.VaultAppRole{Path: r.Path, RoleID: r.RoleID, SecretRef: Secret(f, at+".appRole.secretRef", r.SecretRef)}
	case "kubernetes":
		k := a.Kubernetes
		if k.SecretRef != nil && k.ServiceAccountRef != nil {
			f.Note(at+".kubernetes.secretRef", "not used: serviceAccountRef takes precedence, as upstream")
		}
		if k.ServiceAccountRef == nil {
			f.Refuse(at+".kubernetes", "eso needs serviceAccountRef (it requests the token; a token in a Secret is not supported)")
		} else {
			auth.Kubernetes = &provv2.VaultKubernetesAuth{MountPath: k.Path, Role: k.Role,
				ServiceAccountRef: ServiceAccount(f, at+".kubernetes.serviceAccountRef", *k.ServiceAccountRef)}
		}
	case "jwt":
		j := a.Jwt
		switch {
		case j.SecretRef != nil:
			f.Refuse(at+".jwt.secretRef", "a JWT stored in a Secret is not supported; use kubernetesServiceAccountToken")
		case j.KubernetesServiceAccountToken == nil:
			f.Refuse(at+".jwt", "needs kubernetesServiceAccountToken")
		default:
			sa := ServiceAccount(f, at+".jwt.kubernetesServiceAccountToken.serviceAccountRef", j.KubernetesServiceAccountToken.ServiceAccountRef)
			if aud := j.KubernetesServiceAccountToken.Audiences; aud != nil {
				sa.Audiences = append(sa.Audiences, *aud...)
			}
			if j.KubernetesServiceAccountToken.ExpirationSeconds != nil {
				f.Note(at+".jwt.kubernetesServiceAccountToken.expirationSeconds", "eso requests tokens of the API server's default lifetime")
			}
			auth.JWT = &provv2.VaultKubernetesAuth{MountPath: j.Path, Role: j.Role, ServiceAccountRef: sa}
		}
	case "cert":
		c := a.Cert
		auth.Cert = &provv2.VaultCertAuth{Path: c.Path, Name: c.VaultRole,
			ClientCert: Secret(f, at+".cert.clientCert", c.ClientCert), SecretRef: Secret(f, at+".cert.secretRef", c.SecretRef)}
	}
	return auth
}
