package integration

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
	"github.com/eso-dev/eso/app/grpcclient/grpcclienttest"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/tests/faultproxy"
)

// hub is a second control plane, another cluster to the one eso runs in
// (the edge). eso reaches it through a TCP proxy that a test can stop, and
// its namespace apps holds what the edge reads and writes.
type hub struct {
	client client.Client // the hub's admin
	env    *envtest.Environment
	url    string
	ca     []byte
	proxy  *faultproxy.TCP
}

const hubNamespace = "apps"

func startHub(t *testing.T) *hub {
	t.Helper()
	e := &envtest.Environment{}
	cfg, err := e.Start()
	if err != nil {
		t.Fatalf("starting the hub's API server: %v", err)
	}
	t.Cleanup(func() { _ = e.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := faultproxy.StartTCP(t, u.Host)
	h := &hub{client: c, env: e, url: "https://" + proxy.Addr, ca: cfg.CAData, proxy: proxy}
	h.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hubNamespace}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: "edge"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "create", "update", "delete"},
		}}})
	return h
}

func (h *hub) create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := h.client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s on the hub: %v", o, o.GetName(), err)
		}
	}
}

// bind lets subject use the hub's Secrets of apps.
func (h *hub) bind(t *testing.T, name string, subject rbacv1.Subject) {
	t.Helper()
	h.create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "edge"}, Subjects: []rbacv1.Subject{subject}})
}

// serviceAccountToken makes a ServiceAccount on the hub allowed to use apps
// and returns a token of it.
func (h *hub) serviceAccountToken(t *testing.T, name string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: name}}
	h.create(t, sa)
	h.bind(t, name, rbacv1.Subject{Kind: "ServiceAccount", Name: name, Namespace: hubNamespace})
	tr := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}
	if err := h.client.SubResource("token").Create(context.Background(), sa, tr); err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// certificateUser adds a user authenticated by a client certificate, allowed
// to use apps, and returns its PEM certificate and key.
func (h *hub) certificateUser(t *testing.T, name string) (certPEM, keyPEM []byte) {
	t.Helper()
	user, err := h.env.AddUser(envtest.User{Name: name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.bind(t, name, rbacv1.Subject{Kind: "User", Name: name, APIGroup: "rbac.authorization.k8s.io"})
	cfg := user.Config()
	return cfg.CertData, cfg.KeyData
}

func (h *hub) secret(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	err := h.client.Get(context.Background(), client.ObjectKey{Namespace: hubNamespace, Name: name}, &s)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return &s
}

func hubConfig(ns, name string, server provv1.KubernetesServer, auth provv1.KubernetesAuth) *provv1.Kubernetes {
	return &provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: provv1.KubernetesSpec{RemoteNamespace: hubNamespace, Server: &server, Auth: &auth}}
}

// edgeAndHub is eso on the edge with two stores of the hub: by-token (a
// bearer token, the CA from a Secret) and by-cert (a client certificate, the
// CA inline), and what the first syncs read from them.
type edgeAndHub struct {
	h       *hub
	ns      string
	token   string
	byToken *ssv2.SecretStore
	read    *esv1.ExternalSecret
	synced  *corev1.Secret
}

func setUpEdgeAndHub(t *testing.T) *edgeAndHub {
	h := startHub(t)
	runEso(t, testConfig())
	ns := env.Namespace(t, "edge", nil)
	token := h.serviceAccountToken(t, "edge-reader")
	certPEM, keyPEM := h.certificateUser(t, "edge-writer")
	h.create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: "db"}, Data: map[string][]byte{"password": []byte("hub-pw")}})
	for _, name := range []string{"cert-a", "cert-b"} {
		h.create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: name, Labels: map[string]string{"team": "edge"}},
			Data: map[string][]byte{"tls.crt": []byte(name)}})
	}
	create(t,
		plainSecret(ns, "hub-token", map[string]string{"token": token}),
		plainSecret(ns, "hub-ca", map[string]string{"ca.crt": string(h.ca)}),
		plainSecret(ns, "hub-cert", map[string]string{"tls.crt": string(certPEM), "tls.key": string(keyPEM)}),
		hubConfig(ns, "by-token", provv1.KubernetesServer{URL: h.url, CAProvider: &provv1.CAProvider{Type: provv1.CAProviderSecret, Name: "hub-ca", Key: "ca.crt"}},
			provv1.KubernetesAuth{Token: &provv1.KubernetesTokenAuth{BearerToken: provv1.SecretKeySelector{Name: "hub-token", Key: "token"}}}),
		hubConfig(ns, "by-cert", provv1.KubernetesServer{URL: h.url, CABundle: h.ca},
			provv1.KubernetesAuth{Cert: &provv1.KubernetesCertAuth{ClientCert: provv1.SecretKeySelector{Name: "hub-cert", Key: "tls.crt"},
				ClientKey: provv1.SecretKeySelector{Name: "hub-cert", Key: "tls.key"}}}),
	)
	byToken, byCert := secretStore(ns, "by-token", storeSpec("Kubernetes", "by-token", "")), secretStore(ns, "by-cert", storeSpec("Kubernetes", "by-cert", ""))
	create(t, byToken, byCert)
	waitReady(t, byToken, metav1.ConditionTrue, ssv2.ReasonValid)
	waitReady(t, byCert, metav1.ConditionTrue, ssv2.ReasonValid)

	read := externalSecret(ns, "read", "SecretStore", "by-token", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "password")})
	read.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second}
	found := externalSecret(ns, "found", "SecretStore", "by-cert", nil)
	found.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{{Find: &esv1.ExternalSecretFind{Tags: map[string]string{"team": "edge"}}}}
	create(t, read, found)
	synced := waitSecretData(t, ns, "read", map[string]string{"password": "hub-pw"})
	waitSecretData(t, ns, "found", map[string]string{"cert-a": `{"tls.crt":"cert-a"}`, "cert-b": `{"tls.crt":"cert-b"}`})

	return &edgeAndHub{h: h, ns: ns, token: token, byToken: byToken, read: read, synced: synced}
}

// TestKubernetesProviderReadsAndWritesAnotherCluster: eso on the edge reads
// and writes the hub's Secrets with a bearer token and with a client
// certificate, from v2 configurations and a v1 SecretStore; a CA that does
// not verify the hub fails until the right one is in its Secret; a hub that
// is down empties nothing and is read again when it is back; a revoked
// token is reported as such and the Secret it synced stays.
func TestKubernetesProviderReadsAndWritesAnotherCluster(t *testing.T) {
	f := setUpEdgeAndHub(t)
	t.Run("a PushSecret writes to the hub and deletes there", f.pushesAndDeletes)
	t.Run("a v1 SecretStore reads the hub, its CA in its own namespace", f.readsThroughAV1Store)
	t.Run("a CA that does not verify the hub fails until the right one is in its Secret", f.picksUpAFixedCA)
	t.Run("a hub that is down empties nothing and is read again when back", f.emptiesNothingWhileDown)
	t.Run("a revoked token is reported and the Secret it synced stays", f.reportsARevokedToken)
}

func (f *edgeAndHub) pushesAndDeletes(t *testing.T) {
	h, ns := f.h, f.ns
	create(t, plainSecret(ns, "app", map[string]string{"password": "edge-pw"}))
	ps := pushSecret(ns, "app", "app", []string{"by-cert"}, pushed("password", "pushed-app", "password"))
	ps.Spec.DeletionPolicy = esv1alpha1.DeletionPolicyDelete
	create(t, ps)
	waitReady(t, ps, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
	s := h.secret(t, "pushed-app")
	if s == nil || string(s.Data["password"]) != "edge-pw" || s.Labels[plugin.ManagedByKey] != plugin.ManagedByValue {
		t.Fatalf("the hub holds %+v, want the pushed value marked as eso's", s)
	}
	if err := env.Client.Delete(context.Background(), ps); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pushed Secret to leave the hub", func() error {
		if h.secret(t, "pushed-app") != nil {
			return fmt.Errorf("still there")
		}
		return nil
	})
}

func (f *edgeAndHub) readsThroughAV1Store(t *testing.T) {
	h, ns := f.h, f.ns
	applyYAML(t, ns, fmt.Sprintf(`
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: v1-hub}
spec:
  provider:
    kubernetes:
      remoteNamespace: %s
      server: {url: %q, caProvider: {type: Secret, name: hub-ca, key: ca.crt}}
      auth: {token: {bearerToken: {name: hub-token, key: token}}}
---
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: v1-foreign-ca}
spec:
  provider:
    kubernetes:
      server: {url: %q, caProvider: {type: Secret, name: hub-ca, key: ca.crt, namespace: kube-system}}
      auth: {token: {bearerToken: {name: hub-token, key: token}}}
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: v1-read}
spec:
  refreshInterval: 1h
  secretStoreRef: {name: v1-hub, kind: SecretStore}
  data: [{secretKey: password, remoteRef: {key: db, property: password}}]
`, hubNamespace, h.url, h.url))
	waitSecretData(t, ns, "v1-read", map[string]string{"password": "hub-pw"})
	msg := waitReady(t, &v1stores.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "v1-foreign-ca"}}, metav1.ConditionFalse, ssv2.ReasonInvalidProviderConfig)
	if !strings.Contains(msg, "server.caProvider.namespace") {
		t.Errorf("a CA of another namespace is refused with %q, want the field named", msg)
	}
}

func (f *edgeAndHub) picksUpAFixedCA(t *testing.T) {
	h, ns := f.h, f.ns
	wrong := grpcclienttest.NewCA(t, "not the hub's")
	create(t, plainSecret(ns, "rotating-ca", map[string]string{"ca.crt": string(wrong.PEM)}),
		hubConfig(ns, "rotating", provv1.KubernetesServer{URL: h.url, CAProvider: &provv1.CAProvider{Type: provv1.CAProviderSecret, Name: "rotating-ca", Key: "ca.crt"}},
			provv1.KubernetesAuth{Token: &provv1.KubernetesTokenAuth{BearerToken: provv1.SecretKeySelector{Name: "hub-token", Key: "token"}}}))
	store := secretStore(ns, "rotating", storeSpec("Kubernetes", "rotating", ""))
	es := externalSecret(ns, "rotating", "SecretStore", "rotating", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "password")})
	create(t, store, es)
	msg := waitReady(t, es, metav1.ConditionFalse, esv1.ReasonSecretSyncedError)
	if !strings.Contains(msg, "caProvider") {
		t.Errorf("the condition does not point at the CA: %s", msg)
	}
	var ca corev1.Secret
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "rotating-ca"}, &ca); err != nil {
		t.Fatal(err)
	}
	ca.Data["ca.crt"] = h.ca
	if err := env.Client.Update(context.Background(), &ca); err != nil {
		t.Fatal(err)
	}
	waitSecretData(t, ns, "rotating", map[string]string{"password": "hub-pw"})
}

func (f *edgeAndHub) emptiesNothingWhileDown(t *testing.T) {
	h, ns := f.h, f.ns
	f.synced = waitSecretData(t, ns, "read", map[string]string{"password": "hub-pw"})
	h.proxy.Fail()
	msg := waitReady(t, f.read, metav1.ConditionFalse, esv1.ReasonSecretSyncedError)
	consistently(t, 3*time.Second, "the hub's Secret stays synced while the hub is down", func() error {
		requireUnchanged(t, f.synced)
		return nil
	})
	if strings.Contains(msg, "not found") {
		t.Errorf("a hub that is down reads as a Secret not found: %s", msg)
	}
	h.proxy.Pass()
	waitReadyWithin(t, time.Minute, f.read, metav1.ConditionTrue, esv1.ReasonSecretSynced)
	requireUnchanged(t, f.synced)
}

func (f *edgeAndHub) reportsARevokedToken(t *testing.T) {
	if err := f.h.client.Delete(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: "edge-reader"}}); err != nil {
		t.Fatal(err)
	}
	msg := waitReady(t, f.read, metav1.ConditionFalse, esv1.ReasonSecretSyncedError)
	if !strings.Contains(msg, "refused the credentials") || strings.Contains(msg, f.token) {
		t.Errorf("the condition does not say the token was refused (or shows it): %s", msg)
	}
	consistently(t, 2*time.Second, "the synced Secret stays", func() error {
		requireUnchanged(t, f.synced)
		return nil
	})
	// A spec edit makes the store check its credentials now.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"refreshInterval":"1m"}}`))
	if err := env.Client.Patch(context.Background(), f.byToken, patch); err != nil {
		t.Fatal(err)
	}
	waitReady(t, f.byToken, metav1.ConditionFalse, ssv2.ReasonAuthenticationFailed)
}

// TestKubernetesServiceAccountTokenAtServerURL: a ServiceAccount's token is
// requested from eso's own cluster and presented at server.url (here that
// same cluster, reached by its address as another cluster would be).
func TestKubernetesServiceAccountTokenAtServerURL(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "sa-url", nil)
	create(t,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read-db"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{"db"},
		}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read-db"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "read-db"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: ns}}},
		plainSecret(ns, "db", map[string]string{"password": "pw"}),
		&provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "by-url"}, Spec: provv1.KubernetesSpec{
			Server: &provv1.KubernetesServer{URL: env.Config.Host, CABundle: env.Config.CAData},
			Auth:   &provv1.KubernetesAuth{ServiceAccount: &provv1.KubernetesServiceAccount{Name: "reader"}},
		}},
	)
	store := secretStore(ns, "by-url", storeSpec("Kubernetes", "by-url", ""))
	create(t, store, externalSecret(ns, "db", "SecretStore", "by-url", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "password")}))
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
	waitSecretData(t, ns, "db", map[string]string{"password": "pw"})
}
