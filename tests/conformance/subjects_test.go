package conformance

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/app/wiring"
	"github.com/eso-dev/eso/providers/aws/awstest"
	"github.com/eso-dev/eso/providers/aws/parameterstore"
	"github.com/eso-dev/eso/providers/aws/secretsmanager"
	"github.com/eso-dev/eso/providers/fake"
	"github.com/eso-dev/eso/providers/gcp/gcptest"
	"github.com/eso-dev/eso/providers/gcp/secretmanager"
	"github.com/eso-dev/eso/providers/kubernetes"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/vault"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
)

// Each test function is one provider with the backend behind it, run on
// every path that needs no outside process (paths.go): in process and
// through eso's gRPC server and client.

const namespace = "team"

func kube(t testing.TB, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := provv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

func toJSON(t testing.TB, fields map[string]string) string {
	t.Helper()
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fakeBackend is the Fake provider; seeding adds to its inline data.
func fakeBackend(t testing.TB) backend {
	cfg := &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "fake"}}
	c := kube(t, cfg)
	return backend{registration: fake.Registration, configs: c, Subject: Subject{
		Provider: fake.Registration.NewProvider(plugin.Deps{Client: c, APIReader: c}),
		Ref:      plugin.Ref{Kind: fake.Kind, Namespace: namespace, Name: "fake"},
		Scope:    plugin.Scope{Namespace: namespace},
		Writes:   true,
		// As upstream's Fake.
		PropertyIgnored: true,
		Seed: func(t testing.TB, key string, fields map[string]string) {
			var cur provv1.Fake
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(cfg), &cur); err != nil {
				t.Fatal(err)
			}
			cur.Spec.Data = append(cur.Spec.Data, provv1.FakeSecret{Key: key, Value: toJSON(t, fields)})
			cur.Generation++ // as the API server would count it: clients of the old configuration are replaced
			if err := c.Update(context.Background(), &cur); err != nil {
				t.Fatal(err)
			}
		},
	}}
}

// kubernetesBackend is the Kubernetes provider reading its own namespace as
// eso; seeding creates Secrets there.
func kubernetesBackend(t testing.TB) backend {
	cfg := &provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "k8s"}}
	c := kube(t, cfg)
	return backend{registration: kubernetes.Registration, configs: c, Subject: Subject{
		Provider: kubernetes.Registration.NewProvider(plugin.Deps{Client: c, APIReader: c}),
		Ref:      plugin.Ref{Kind: kubernetes.Kind, Namespace: namespace, Name: "k8s"},
		Scope:    plugin.Scope{Namespace: namespace},
		Writes:   true,
		Adopts:   true,
		Seed: func(t testing.TB, key string, fields map[string]string) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: key}, Data: map[string][]byte{}}
			for k, v := range fields {
				s.Data[k] = []byte(v)
			}
			if err := c.Create(context.Background(), s); err != nil {
				t.Fatal(err)
			}
		},
	}}
}

func awsConfig(endpoint string) aws.Config {
	return aws.Config{Region: "eu-central-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("seed", "seed", "")}
}

// awsSecretsManagerBackend is the Secrets Manager provider against moto.
func awsSecretsManagerBackend(t testing.TB) backend {
	endpoint := awstest.StartMoto(t)
	cfg := &provv1.AWSSecretManager{ObjectMeta: metav1.ObjectMeta{Name: "aws"},
		Spec: provv1.AWSSpec{Region: "eu-central-1", Endpoint: endpoint, Auth: awstest.StaticAuth()}}
	c := awstest.Kube(t, cfg)
	seed := sm.NewFromConfig(awsConfig(endpoint))
	return backend{registration: secretsmanager.Registration, configs: c, Subject: Subject{
		Writes:   true,
		Adopts:   true,
		Provider: secretsmanager.Registration.NewProvider(plugin.Deps{Client: c, APIReader: c}),
		Ref:      plugin.Ref{Kind: secretsmanager.Kind, Namespace: awstest.Namespace, Name: "aws"},
		Scope:    plugin.Scope{Namespace: awstest.Namespace},
		Seed: func(t testing.TB, key string, fields map[string]string) {
			if _, err := seed.CreateSecret(context.Background(), &sm.CreateSecretInput{Name: aws.String(key), SecretString: aws.String(toJSON(t, fields))}); err != nil {
				t.Fatal(err)
			}
		},
	}}
}

// awsParameterStoreBackend is the Parameter Store provider against moto.
func awsParameterStoreBackend(t testing.TB) backend {
	endpoint := awstest.StartMoto(t)
	cfg := &provv1.AWSParameterStore{ObjectMeta: metav1.ObjectMeta{Name: "ssm"},
		Spec: provv1.AWSSpec{Region: "eu-central-1", Endpoint: endpoint, Auth: awstest.StaticAuth()}}
	c := awstest.Kube(t, cfg)
	seed := ssm.NewFromConfig(awsConfig(endpoint))
	return backend{registration: parameterstore.Registration, configs: c, Subject: Subject{
		Writes:   true,
		Adopts:   true,
		Provider: parameterstore.Registration.NewProvider(plugin.Deps{Client: c, APIReader: c}),
		Ref:      plugin.Ref{Kind: parameterstore.Kind, Namespace: awstest.Namespace, Name: "ssm"},
		Scope:    plugin.Scope{Namespace: awstest.Namespace},
		Seed: func(t testing.TB, key string, fields map[string]string) {
			if _, err := seed.PutParameter(context.Background(), &ssm.PutParameterInput{Name: aws.String(key),
				Value: aws.String(toJSON(t, fields)), Type: ssmtypes.ParameterTypeSecureString}); err != nil {
				t.Fatal(err)
			}
		},
	}}
}

// vaultBackend is the Vault provider (KV v2) against a real dev server.
func vaultBackend(t testing.TB) backend {
	root := vaulttest.Start(t)
	cfg := &provv1.Vault{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "vault"}, Spec: provv1.VaultSpec{
		Server: root.Address(), Path: "secret", Version: "v2",
		Auth: provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault-token", Key: "token"}},
	}}
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "vault-token"},
		Data: map[string][]byte{"token": []byte(vaulttest.RootToken)}}
	c := kube(t, cfg, token)
	return backend{registration: vault.Registration, configs: c, Subject: Subject{
		Writes:   true,
		Adopts:   true,
		Provider: vault.Registration.NewProvider(plugin.Deps{Client: c, APIReader: c}),
		Ref:      plugin.Ref{Kind: vault.Kind, Namespace: namespace, Name: "vault"},
		Scope:    plugin.Scope{Namespace: namespace},
		Seed: func(t testing.TB, key string, fields map[string]string) {
			data := map[string]any{}
			for k, v := range fields {
				data[k] = v
			}
			if _, err := root.Logical().Write("secret/data/"+key, map[string]any{"data": data}); err != nil {
				t.Fatal(err)
			}
		},
	}}
}

// gcpBackend is the GCP provider with the real client library against
// gcptest, an in-process server speaking the Secret Manager API (no emulator
// exists).
func gcpBackend(t testing.TB) backend {
	srv, opts := gcptest.Start(t)
	cfg := &provv1.GCPSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "gcp"}, Spec: provv1.GCPSecretManagerSpec{ProjectID: "p"}}
	c := kube(t, cfg)
	return backend{registration: secretmanager.Registration, configs: c, Subject: Subject{
		Writes:   true,
		Adopts:   true,
		Provider: secretmanager.New(plugin.Deps{Client: c, APIReader: c}, opts...),
		Ref:      plugin.Ref{Kind: secretmanager.Kind, Namespace: namespace, Name: "gcp"},
		Scope:    plugin.Scope{Namespace: namespace},
		Seed: func(t testing.TB, key string, fields map[string]string) {
			srv.Add("projects/p/secrets/"+key, []byte(toJSON(t, fields)), nil)
		},
	}}
}

// backends holds, by configuration kind, how to stand up each provider
// with a backend behind it.
var backends = map[string]func(testing.TB) backend{
	fake.Kind:           fakeBackend,
	kubernetes.Kind:     kubernetesBackend,
	secretsmanager.Kind: awsSecretsManagerBackend,
	parameterstore.Kind: awsParameterStoreBackend,
	vault.Kind:          vaultBackend,
	secretmanager.Kind:  gcpBackend,
}

// TestEveryCompiledInProvider runs the suite for every provider the catalog
// compiles in, on every path; a provider without a backend here fails.
func TestEveryCompiledInProvider(t *testing.T) {
	for _, reg := range wiring.Plugins() {
		if reg.Role() != plugin.RoleProvider {
			continue
		}
		t.Run(reg.Kind, func(t *testing.T) {
			newBackend, ok := backends[reg.Kind]
			if !ok {
				t.Fatalf("provider %s has no conformance backend: add one to backends in subjects_test.go", reg.Kind)
			}
			runEveryPath(t, newBackend)
		})
	}
}
