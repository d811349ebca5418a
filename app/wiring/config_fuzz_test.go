package wiring

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// configSeeds are configurations as tenants write them, one or more per
// kind compiled in; the fuzzer mutates them. A seed whose kind is not
// compiled into this build is tried against the other kinds, which is
// fuzzing too.
var configSeeds = []string{
	`{"spec":{"data":[{"key":"db","value":"{\"user\":\"app\"}","version":"1"}]}}`,
	`{"spec":{"remoteNamespace":"shared","auth":{"serviceAccount":{"name":"reader","audiences":["a"]}}}}`,
	`{"spec":{}}`,
	`{"spec":{"server":"https://vault.example:8200","path":"secret","version":"v2","namespace":"team",` +
		`"caProvider":{"type":"Secret","name":"creds","key":"ca"},"auth":{"tokenSecretRef":{"name":"creds","key":"token"}}}}`,
	`{"spec":{"server":"http://127.0.0.1:1","path":"kv","version":"v1","auth":{"appRole":{"path":"approle","roleId":"r","secretRef":{"name":"creds","key":"id"}}}}}`,
	`{"spec":{"server":"https://127.0.0.1:1","caBundle":"LS0tLS0=","auth":{"cert":{"path":"cert","name":"eso","clientCert":{"name":"creds","key":"crt"},"secretRef":{"name":"creds","key":"key"}}}}}`,
	`{"spec":{"server":"http://127.0.0.1:1","auth":{"kubernetes":{"role":"eso","mountPath":"k8s","serviceAccountRef":{"name":"sa","audiences":["vault"]}}}}}`,
	`{"spec":{"region":"eu-west-1","endpoint":"http://127.0.0.1:1","stsEndpoint":"http://127.0.0.1:1","prefix":"app/","role":"arn:aws:iam::1:role/r",` +
		`"externalID":"x","sessionTags":[{"key":"k","value":"v"}],"auth":{"secretRef":{"accessKeyIDSecretRef":{"name":"creds","key":"id"},"secretAccessKeySecretRef":{"name":"creds","key":"secret"}}}}}`,
	`{"spec":{"region":"us-east-1","role":"arn:aws:iam::1:role/r","auth":{"jwt":{"serviceAccountRef":{"name":"sa"}}}}}`,
	`{"spec":{"projectID":"p","location":"europe-west1","auth":{"secretRef":{"secretAccessKeySecretRef":{"name":"creds","key":"key"}}}}}`,
	`{"spec":{"projectID":"p","endpoint":"127.0.0.1:1","auth":{"workloadIdentity":{"serviceAccountRef":{"name":"sa"},"clusterLocation":"l","clusterName":"c"}}}}`,
}

// credentialSeeds are what the credentials Secret may hold: a token, a
// service account key, PEM, nothing useful.
var credentialSeeds = []string{
	"s.token",
	`{"type":"service_account","project_id":"p","client_email":"a@p.iam.gserviceaccount.com","private_key":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}`,
	"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
	"",
}

// FuzzDecodeProviderConfig decodes bytes as every provider configuration
// kind compiled in, as eso's client would read the object, and runs the
// provider's Validate and NewClient on it with a credentials Secret holding
// the second input. Whatever a tenant writes, nothing may panic; nothing
// here reaches a network (clients connect on first use).
func FuzzDecodeProviderConfig(f *testing.F) {
	for _, c := range configSeeds {
		for _, s := range credentialSeeds {
			f.Add([]byte(c), []byte(s))
		}
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		f.Fatal(err)
	}
	var regs []plugin.Registration
	for _, reg := range Plugins() {
		if reg.Role() != plugin.RoleProvider {
			continue
		}
		if err := reg.AddToScheme(scheme); err != nil {
			f.Fatal(err)
		}
		regs = append(regs, reg)
	}
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()

	f.Fuzz(func(t *testing.T, config, credential []byte) {
		for _, reg := range regs {
			gvk := provv1.GroupVersion.WithKind(reg.Kind)
			obj := reg.NewConfig()
			if _, _, err := decoder.Decode(config, &gvk, obj); err != nil {
				continue
			}
			obj.SetNamespace("team")
			obj.SetName("cfg")
			obj.SetResourceVersion("")
			creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "creds"}, Data: map[string][]byte{}}
			for _, k := range []string{"token", "ca", "id", "secret", "key", "crt"} {
				creds.Data[k] = credential
			}
			kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(creds).Build()
			if err := kube.Create(context.Background(), obj); err != nil {
				continue // the API server would refuse it too
			}
			exercise(t, reg, kube)
		}
	})
}

func exercise(t *testing.T, reg plugin.Registration, kube client.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	p := reg.NewProvider(plugin.Deps{Client: kube, APIReader: kube})
	ref := plugin.Ref{Kind: reg.Kind, Namespace: "team", Name: "cfg"}
	for _, scope := range []plugin.Scope{{Namespace: "team"}, {}} {
		_ = p.Validate(ctx, ref, scope)
	}
	if c, err := p.NewClient(ctx, ref, plugin.Scope{Namespace: "team"}); err == nil {
		_ = c.Capabilities()
		_ = c.Close(ctx)
	}
}
