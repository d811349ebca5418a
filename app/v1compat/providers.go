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
	if !strings.Contains(server, "://") {
		server = "https://" + server // upstream's default is "kubernetes.default"
	}
	u, err := url.Parse(server)
	if err != nil {
		return false
	}
	host := u.Hostname()
	return host == "kubernetes.default" || host == "kubernetes.default.svc" || strings.HasPrefix(host, "kubernetes.default.svc.")
}

func (t *translator) kubernetes(p *v1stores.KubernetesProvider) client.Object {
	const at = "spec.provider.kubernetes"
	// Upstream reads the "default" namespace when remoteNamespace is empty.
	spec := provv2.KubernetesSpec{RemoteNamespace: p.RemoteNamespace}
	if spec.RemoteNamespace == "" {
		spec.RemoteNamespace = "default"
	}
	if !inCluster(p.Server.URL) {
		t.Refuse(at+".server.url", "eso's Kubernetes provider reads this cluster only (kubernetes.default)")
	}
	if p.Server.CAProvider != nil || len(p.Server.CABundle) > 0 {
		// Not read, so its namespace decides nothing.
		t.Note(at+".server.caBundle/caProvider", "this cluster's own CA is used")
	}
	if p.AuthRef != nil {
		t.Refuse(at+".authRef", "a kubeconfig in a Secret is not supported; use auth.serviceAccount")
	}
	if p.Auth == nil || p.Auth.ServiceAccount == nil && p.Auth.Token == nil && p.Auth.Cert == nil {
		// As upstream, which refuses a store without auth: eso's own
		// identity is never lent to a store.
		t.Refuse(at+".auth", "eso needs auth.serviceAccount, whose RBAC decides what the store reads")
	}
	if p.Auth != nil {
		if p.Auth.Token != nil {
			t.Refuse(at+".auth.token", "a bearer token in a Secret is not supported; use auth.serviceAccount")
		}
		if p.Auth.Cert != nil {
			t.Refuse(at+".auth.cert", "client certificates are not supported; use auth.serviceAccount")
		}
		if sa := p.Auth.ServiceAccount; sa != nil {
			ref := v1blocks.ServiceAccount(t, at+".auth.serviceAccount", *sa)
			spec.Auth = &provv2.KubernetesAuth{ServiceAccount: &ref}
		}
	}
	return &provv2.Kubernetes{Spec: spec}
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
