package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/grpcclient/grpcclienttest"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/tests/conformance"
	"github.com/eso-dev/eso/tests/testenv"
)

// TestOutOfTreeProvider: examples/provider-inmemory, a provider in its own
// Go module written with the sdk package only, is built and run as its own
// process under its own least-privilege identity. A SecretStore naming its
// kind, which eso has never heard of, syncs an ExternalSecret through it,
// and the process passes the conformance suite, reached as core reaches it.
func TestOutOfTreeProvider(t *testing.T) {
	dir := t.TempDir()
	example := filepath.Join(testenv.RepoRoot(), "examples", "provider-inmemory")
	bin := filepath.Join(dir, "provider-inmemory")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = example
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the example provider: %v\n%s", err, out)
	}
	installExampleCRD(t, filepath.Join(example, "crd.yaml"))

	ns := env.Namespace(t, "oot", nil)
	const kind = "InMemory"
	kubeconfig := writeKubeconfig(t, dir, exampleProviderIdentity(t, ns))
	serverCA, clientCA := grpcclienttest.NewCA(t, "provider-ca"), grpcclienttest.NewCA(t, "core-ca")
	cert, key := serverCA.Issue(t, "127.0.0.1", true)
	for name, b := range map[string][]byte{"tls.crt": cert, "tls.key": key, "ca.crt": clientCA.PEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	grpcAddr, probeAddr := freeAddr(t), freeAddr(t)
	// The arguments charts/eso-provider gives it.
	proc := exec.Command(bin, "--mode=provider", "--provider-kinds="+kind, "--log-level=info", "--log-format=json",
		"--kubeconfig="+kubeconfig, "--grpc-bind-address="+grpcAddr,
		"--metrics-bind-address=0", "--health-probe-bind-address="+probeAddr,
		"--tls-cert-file="+filepath.Join(dir, "tls.crt"), "--tls-key-file="+filepath.Join(dir, "tls.key"),
		"--tls-client-ca-file="+filepath.Join(dir, "ca.crt"))
	var logs strings.Builder
	proc.Stdout, proc.Stderr = &logs, &logs
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = proc.Process.Signal(os.Interrupt)
		_ = proc.Wait()
		if t.Failed() {
			t.Logf("provider process output:\n%s", logs.String())
		}
	})
	eventually(t, "the provider process to be ready", func() error {
		resp, err := http.Get("http://" + probeAddr + "/readyz")
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz: %s", resp.Status)
		}
		return nil
	})

	config := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"secrets": map[string]any{
		"db":           `{"user":"app","password":"in-memory-pw"}`,
		"conf-db":      `{"user":"app","password":"s3cr3t"}`,
		"conf-find-a":  `{"v":"a"}`,
		"conf-find-b":  `{"v":"b"}`,
		"conf-foreign": `{"owner":"someone-else"}`,
	}}}}
	config.SetGroupVersionKind(provv1.GroupVersion.WithKind(kind))
	config.SetNamespace(ns)
	config.SetName("memory")
	clientCert := grpcclienttest.ClientSecret(t, ns, "core-tls", "eso-core", clientCA, serverCA)
	store := secretStore(ns, "memory", storeSpec(kind, "memory", ""))
	store.Spec.ProviderConfig.Address = grpcAddr
	store.Spec.ProviderConfig.Auth = &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: "core-tls"}}
	es := externalSecret(ns, "app", "SecretStore", "memory", map[string]esv1.ExternalSecretDataRemoteRef{"pw": ref("db", "password")})
	runEso(t, testConfig())
	create(t, config, clientCert, store, es)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
	waitSecretData(t, ns, "app", map[string]string{"pw": "in-memory-pw"})

	t.Run("a certificate for another namespace reads nothing", func(t *testing.T) {
		certPEM, keyPEM := clientCA.IssueForNamespaces(t, "tenant-client", "elsewhere")
		tenantCert := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", Name: "tenant-tls"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM, "ca.crt": serverCA.PEM}}
		tenant := conformance.Remote(t, grpcAddr, kind, tenantCert)
		c, err := tenant.NewClient(context.Background(), plugin.Ref{Kind: kind, Namespace: ns, Name: "memory"}, plugin.Scope{Namespace: ns})
		if err == nil {
			_, err = c.GetSecret(context.Background(), esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "password"})
		}
		if !errors.Is(err, plugin.ErrOutOfScope) {
			t.Fatalf("a tenant of another namespace read %s/memory: %v, want OutOfScope", ns, err)
		}
	})
	t.Run("conformance", func(t *testing.T) {
		conformance.Run(t, conformance.Subject{
			Provider: conformance.Remote(t, grpcAddr, kind, clientCert),
			Ref:      plugin.Ref{Kind: kind, Namespace: ns, Name: "memory"},
			Scope:    plugin.Scope{Namespace: ns},
			Writes:   true,
		})
	})
}

// installExampleCRD creates the CRD in file and waits until it is served.
func installExampleCRD(t *testing.T, file string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &crd.Object); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := env.Client.Create(ctx, crd); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	eventually(t, "the "+kind+" CRD to be served", func() error {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(provv1.GroupVersion.WithKind(kind + "List"))
		return env.Client.List(ctx, list)
	})
}

// exampleProviderIdentity is a user who may read InMemory configurations
// and Secrets in ns, and nothing else: what the example provider needs.
func exampleProviderIdentity(t *testing.T, ns string) *rest.Config {
	t.Helper()
	const user = "inmemory-provider"
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{provv1.GroupVersion.Group}, Resources: []string{"inmemories"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
	}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	create(t, role, binding)
	return env.UserConfig(t, user)
}

// writeKubeconfig writes rc as a kubeconfig file in dir.
func writeKubeconfig(t *testing.T, dir string, rc *rest.Config) string {
	t.Helper()
	path := filepath.Join(dir, "kubeconfig")
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"envtest": {Server: rc.Host, CertificateAuthorityData: rc.CAData}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"user": {ClientCertificateData: rc.CertData, ClientKeyData: rc.KeyData, Token: rc.BearerToken}},
		Contexts:       map[string]*clientcmdapi.Context{"envtest": {Cluster: "envtest", AuthInfo: "user"}},
		CurrentContext: "envtest",
	}
	if err := clientcmd.WriteToFile(cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
