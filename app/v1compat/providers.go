package v1compat

import (
	"net/url"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	provv2 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
	"github.com/eso-dev/eso/providers/v1blocks"
)

// Each function below maps one upstream provider block field by field. A
// field eso cannot serve is refused with its path and what to write
// instead; a field whose only effect eso does not have (and whose absence
// changes no read or write) is noted, and the note shows in the store's
// Ready message.

// Note records a field that is accepted but has no effect in eso.
func (t *translator) Note(path, why string) {
	t.out.Notes = append(t.out.Notes, path+": "+why)
}

func (t *translator) aws(p *v1stores.AWSProvider) client.Object {
	const at = "spec.provider.aws"
	spec := provv2.AWSSpec{Region: p.Region, Role: p.Role, ExternalID: p.ExternalID, Prefix: p.Prefix, STSEndpoint: t.endpoints.AWSSTS}
	for _, tag := range p.SessionTags {
		if tag != nil {
			spec.SessionTags = append(spec.SessionTags, provv2.AWSSessionTag{Key: tag.Key, Value: tag.Value})
		}
	}
	if s := p.Auth.SecretRef; s != nil {
		spec.Auth = &provv2.AWSAuth{SecretRef: &provv2.AWSAuthSecretRef{
			AccessKeyID:     v1blocks.Secret(t, at+".auth.secretRef.accessKeyIDSecretRef", s.AccessKeyID),
			SecretAccessKey: v1blocks.Secret(t, at+".auth.secretRef.secretAccessKeySecretRef", s.SecretAccessKey),
			SessionToken:    v1blocks.OptionalSecret(t, at+".auth.secretRef.sessionTokenSecretRef", s.SessionToken),
		}}
	}
	if j := p.Auth.JWTAuth; j != nil {
		switch {
		case j.ServiceAccountRef == nil:
			t.Refuse(at+".auth.jwt", "needs serviceAccountRef")
		case p.Role == "":
			t.Refuse(at+".auth.jwt", "eso exchanges the ServiceAccount's token for the role in spec.provider.aws.role: set it (to the role of the eks.amazonaws.com/role-arn annotation)")
		default:
			if p.Auth.SecretRef != nil {
				t.Note(at+".auth.secretRef", "not used: auth.jwt takes precedence, as upstream")
			}
			if p.ExternalID != "" || len(p.SessionTags) > 0 {
				t.Refuse(at+".externalID/sessionTags", "not sent with auth.jwt, which exchanges the token for the role directly")
			}
			spec.Auth = &provv2.AWSAuth{JWT: &provv2.AWSJWTAuth{ServiceAccountRef: v1blocks.ServiceAccount(t, at+".auth.jwt.serviceAccountRef", *j.ServiceAccountRef)}}
		}
	}
	if len(p.AdditionalRoles) > 0 {
		t.Refuse(at+".additionalRoles", "role chaining is not supported; assume one role with spec.provider.aws.role")
	}
	if len(p.TransitiveTagKeys) > 0 {
		t.Refuse(at+".transitiveTagKeys", "role chaining is not supported")
	}
	if p.SessionTagsPolicy != "" && p.SessionTagsPolicy != v1stores.SessionTagsPolicyNone {
		t.Refuse(at+".sessionTagsPolicy", "only None is supported; pass tags with sessionTags")
	}
	if len(p.CustomSessionTags) > 0 {
		t.Refuse(at+".customSessionTags", "only sessionTags are passed")
	}
	if sm := p.SecretsManager; sm != nil && (sm.ForceDeleteWithoutRecovery || sm.RecoveryWindowInDays != 0) {
		t.Note(at+".secretsManager", "eso deletes pushed secrets with the default 30-day recovery window")
	}
	switch p.Service {
	case v1stores.AWSServiceSecretsManager:
		spec.Endpoint = t.endpoints.AWSSecretsManager
		return &provv2.AWSSecretManager{Spec: spec}
	case v1stores.AWSServiceParameterStore:
		spec.Endpoint = t.endpoints.AWSParameterStore
		return &provv2.AWSParameterStore{Spec: spec}
	default:
		t.Refuse(at+".service", "eso serves SecretsManager and ParameterStore, not "+string(p.Service))
		return &provv2.AWSSecretManager{Spec: spec}
	}
}

func (t *translator) gcp(p *v1stores.GCPSMProvider) client.Object {
	const at = "spec.provider.gcpsm"
	spec := provv2.GCPSecretManagerSpec{ProjectID: p.ProjectID, Location: p.Location, Endpoint: t.endpoints.GCPSecretManager}
	if p.ProjectID == "" {
		t.Refuse(at+".projectID", "eso needs the project ID")
	}
	if s := p.Auth.SecretRef; s != nil {
		spec.Auth = &provv2.GCPAuth{SecretRef: &provv2.GCPAuthSecretRef{
			SecretAccessKey: v1blocks.Secret(t, at+".auth.secretRef.secretAccessKeySecretRef", s.SecretAccessKey)}}
	}
	if wi := p.Auth.WorkloadIdentity; wi != nil && p.Auth.SecretRef != nil {
		t.Note(at+".auth.workloadIdentity", "not used: auth.secretRef takes precedence, as upstream")
	} else if wi != nil {
		if wi.ClusterLocation == "" || wi.ClusterName == "" {
			t.Refuse(at+".auth.workloadIdentity", "eso needs clusterLocation and clusterName (it does not ask the metadata server)")
		}
		spec.Auth = &provv2.GCPAuth{WorkloadIdentity: &provv2.GCPWorkloadIdentity{
			ServiceAccountRef: v1blocks.ServiceAccount(t, at+".auth.workloadIdentity.serviceAccountRef", wi.ServiceAccountRef),
			ClusterLocation:   wi.ClusterLocation, ClusterName: wi.ClusterName, ClusterProjectID: wi.ClusterProjectID,
		}}
	}
	if p.Auth.WorkloadIdentityFederation != nil {
		t.Refuse(at+".auth.workloadIdentityFederation", "not supported; use secretRef or workloadIdentity")
	}
	if p.SecretVersionSelectionPolicy == v1stores.SecretVersionSelectionPolicyLatestOrFetch {
		t.Refuse(at+".secretVersionSelectionPolicy", "only LatestOrFail is supported")
	}
	return &provv2.GCPSecretManager{Spec: spec}
}

func (t *translator) vault(p *upstreamv1.VaultProvider) client.Object {
	const at = "spec.provider.vault"
	spec := v1blocks.VaultConnection(t, at, p)
	spec.Version = string(p.Version)
	if spec.Version == "" {
		spec.Version = "v2"
	}
	if p.Path != nil && *p.Path != "" {
		spec.Path = *p.Path
	} else {
		t.Refuse(at+".path", "eso needs the KV mount (e.g. secret); reading the mount from each remote key is not supported")
	}
	if p.CheckAndSet != nil && p.CheckAndSet.Required {
		t.Refuse(at+".checkAndSet", "check-and-set writes are not supported")
	}
	if p.ReadYourWrites || p.ForwardInconsistent {
		t.Note(at+".readYourWrites/forwardInconsistent", "not sent; eso reads from the server it is pointed at")
	}
	return &provv2.Vault{Spec: spec}
}

// inCluster reports whether a Kubernetes server URL is this cluster's API server.
func inCluster(server string) bool {
	if server == "" {
		return true
	}
	u, err := url.Parse(withScheme(server))
	if err != nil {
		return false
	}
	host := u.Hostname()
	return host == "kubernetes.default" || host == "kubernetes.default.svc" || strings.HasPrefix(host, "kubernetes.default.svc.")
}

// withScheme reads a server URL as upstream's client does: https unless
// it says otherwise (upstream's default is "kubernetes.default").
func withScheme(server string) string {
	if !strings.Contains(server, "://") {
		return "https://" + server
	}
	return server
}

func (t *translator) kubernetes(p *v1stores.KubernetesProvider) client.Object {
	const at = "spec.provider.kubernetes"
	// Upstream reads the "default" namespace when remoteNamespace is empty.
	spec := provv2.KubernetesSpec{RemoteNamespace: p.RemoteNamespace, Server: t.kubernetesServer(p.Server)}
	if spec.RemoteNamespace == "" {
		spec.RemoteNamespace = "default"
	}
	if p.AuthRef != nil {
		t.Refuse(at+".authRef", "a kubeconfig in a Secret is not supported; use server and auth (token, cert or serviceAccount)")
	}
	spec.Auth = t.kubernetesAuth(p.Auth)
	return &provv2.Kubernetes{Spec: spec}
}

// kubernetesServer is another cluster's server block; this cluster's
// (kubernetes.default) is reached as eso reaches it, with its own CA.
func (t *translator) kubernetesServer(s v1stores.KubernetesServer) *provv2.KubernetesServer {
	const at = "spec.provider.kubernetes.server"
	if inCluster(s.URL) {
		if s.CAProvider != nil || len(s.CABundle) > 0 {
			// Not read, so its namespace decides nothing.
			t.Note(at+".caBundle/caProvider", "this cluster's own CA is used")
		}
		return nil
	}
	u := withScheme(s.URL)
	if !strings.HasPrefix(u, "https://") {
		t.Refuse(at+".url", "eso reaches another cluster's API server over https only")
	}
	return &provv2.KubernetesServer{URL: u, CABundle: s.CABundle, CAProvider: v1blocks.CAProvider(t, at+".caProvider", s.CAProvider)}
}

// kubernetesAuth is the one identity the store reads as. As upstream, a
// store without auth is refused: eso's own identity is never lent to it.
func (t *translator) kubernetesAuth(a *v1stores.KubernetesAuth) *provv2.KubernetesAuth {
	const at = "spec.provider.kubernetes.auth"
	if a == nil || a.ServiceAccount == nil && a.Token == nil && a.Cert == nil {
		t.Refuse(at, "eso needs auth (serviceAccount, token or cert), whose permissions decide what the store reads")
		return nil
	}
	out := &provv2.KubernetesAuth{}
	if a.Token != nil {
		out.Token = &provv2.KubernetesTokenAuth{BearerToken: v1blocks.Secret(t, at+".token.bearerToken", a.Token.BearerToken)}
	}
	if a.Cert != nil {
		out.Cert = &provv2.KubernetesCertAuth{
			ClientCert: v1blocks.Secret(t, at+".cert.clientCert", a.Cert.ClientCert),
			ClientKey:  v1blocks.Secret(t, at+".cert.clientKey", a.Cert.ClientKey),
		}
	}
	if a.ServiceAccount != nil {
		ref := v1blocks.ServiceAccount(t, at+".serviceAccount", *a.ServiceAccount)
		out.ServiceAccount = &ref
	}
	if (out.Token != nil) && (out.Cert != nil) || (out.Token != nil || out.Cert != nil) && out.ServiceAccount != nil {
		t.Refuse(at, "set exactly one of serviceAccount, token or cert")
	}
	return out
}

func (t *translator) fake(p *v1stores.FakeProvider) client.Object {
	spec := provv2.FakeSpec{}
	for _, d := range p.Data {
		spec.Data = append(spec.Data, provv2.FakeSecret{Key: d.Key, Value: d.Value, Version: d.Version})
	}
	if p.ValidationResult != nil && *p.ValidationResult != v1stores.ValidationResultReady {
		t.Refuse("spec.provider.fake.validationResult", "only 0 (Ready) is supported")
	}
	return &provv2.Fake{Spec: spec}
}
