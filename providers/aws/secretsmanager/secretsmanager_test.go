package secretsmanager

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/aws/awstest"
	"github.com/eso-dev/eso/providers/plugin"
)

// These tests run the real aws-sdk-go-v2 client against moto_server.

const region = "us-east-1"

func seedClient(endpoint string) *sm.Client {
	return sm.NewFromConfig(aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider("seed", "seed", "")},
		func(o *sm.Options) { o.BaseEndpoint = aws.String(endpoint) })
}

func kube(t *testing.T, spec provv1.AWSSpec) client.Client {
	t.Helper()
	return awstest.Kube(t, &provv1.AWSSecretManager{ObjectMeta: metav1.ObjectMeta{Name: "aws"}, Spec: spec})
}

func staticSpec(endpoint string) provv1.AWSSpec {
	return provv1.AWSSpec{Region: region, Endpoint: endpoint, STSEndpoint: endpoint, Auth: awstest.StaticAuth()}
}

var ref = plugin.Ref{Kind: Kind, Namespace: awstest.Namespace, Name: "aws"}

func newClient(t *testing.T, spec provv1.AWSSpec) plugin.SecretsClient {
	t.Helper()
	c := kube(t, spec)
	p := Registration.NewProvider(plugin.Deps{Client: c, APIReader: c})
	cl, err := p.NewClient(context.Background(), ref, plugin.Scope{Namespace: "team"})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func TestReadAgainstMoto(t *testing.T) {
	ctx := context.Background()
	endpoint := awstest.StartMoto(t)
	seed := seedClient(endpoint)
	mustCreate := func(name, value string, tags map[string]string) {
		in := &sm.CreateSecretInput{Name: aws.String(name), SecretString: aws.String(value)}
		for k, v := range tags {
			in.Tags = append(in.Tags, smtypes.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		if _, err := seed.CreateSecret(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	mustCreate("db", `{"user":"app","password":"pw-1","tls":{"mode":"verify"}}`, map[string]string{"team": "payments"})
	mustCreate("prod/api", "token-1", map[string]string{"env": "prod"})
	mustCreate("prod/web", "token-2", map[string]string{"env": "prod"})
	mustCreate("dev/api", "token-3", map[string]string{"env": "dev"})
	if _, err := seed.CreateSecret(ctx, &sm.CreateSecretInput{Name: aws.String("blob"), SecretBinary: []byte{0, 1, 2}}); err != nil {
		t.Fatal(err)
	}
	first, err := seed.GetSecretValue(ctx, &sm.GetSecretValueInput{SecretId: aws.String("db")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seed.PutSecretValue(ctx, &sm.PutSecretValueInput{SecretId: aws.String("db"), SecretString: aws.String(`{"user":"app","password":"pw-2"}`)}); err != nil {
		t.Fatal(err)
	}

	c := newClient(t, staticSpec(endpoint))
	get := func(r esv1.ExternalSecretDataRemoteRef) string {
		t.Helper()
		v, err := c.GetSecret(ctx, r)
		if err != nil {
			t.Fatalf("GetSecret(%+v): %v", r, err)
		}
		return string(v)
	}
	if got := get(esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "password"}); got != "pw-2" {
		t.Errorf("current password = %q", got)
	}
	if got := get(esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "password", Version: "AWSPREVIOUS"}); got != "pw-1" {
		t.Errorf("AWSPREVIOUS password = %q", got)
	}
	if got := get(esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "tls.mode", Version: "uuid/" + aws.ToString(first.VersionId)}); got != "verify" {
		t.Errorf("version by id, nested property = %q", got)
	}
	if got := get(esv1.ExternalSecretDataRemoteRef{Key: "blob"}); got != "\x00\x01\x02" {
		t.Errorf("binary secret = %q", got)
	}
	if got := get(esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "team", MetadataPolicy: esv1.MetadataPolicyFetch}); got != "payments" {
		t.Errorf("tag via metadataPolicy Fetch = %q", got)
	}
	m, err := c.GetSecretMap(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"})
	if err != nil || string(m["user"]) != "app" || len(m) != 2 {
		t.Errorf("GetSecretMap = %q, %v", m, err)
	}
	if _, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "nope"}); !errors.Is(err, plugin.ErrSecretNotFound) {
		t.Errorf("missing secret: %v", err)
	}

	path := "prod/"
	for name, tc := range map[string]struct {
		find esv1.ExternalSecretFind
		want []string
	}{
		"path":       {esv1.ExternalSecretFind{Path: &path}, []string{"prod/api", "prod/web"}},
		"tags":       {esv1.ExternalSecretFind{Tags: map[string]string{"env": "prod"}}, []string{"prod/api", "prod/web"}},
		"name regex": {esv1.ExternalSecretFind{Name: &esv1.FindName{RegExp: "api$"}}, []string{"dev/api", "prod/api"}},
		"both":       {esv1.ExternalSecretFind{Name: &esv1.FindName{RegExp: "api$"}, Tags: map[string]string{"env": "prod"}}, []string{"prod/api"}},
	} {
		got, err := c.GetAllSecrets(ctx, tc.find)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: found %d secrets, want %v", name, len(got), tc.want)
		}
		for _, k := range tc.want {
			if _, ok := got[k]; !ok {
				t.Errorf("%s: %s not found", name, k)
			}
		}
	}
	if got, _ := c.GetAllSecrets(ctx, esv1.ExternalSecretFind{Path: &path}); string(got["prod/web"]) != "token-2" {
		t.Errorf("found value = %q", got["prod/web"])
	}
}

func TestAssumeRoleAgainstMoto(t *testing.T) {
	ctx := context.Background()
	endpoint := awstest.StartMoto(t)
	if _, err := seedClient(endpoint).CreateSecret(ctx, &sm.CreateSecretInput{Name: aws.String("k"), SecretString: aws.String("v")}); err != nil {
		t.Fatal(err)
	}
	spec := staticSpec(endpoint)
	spec.Role = "arn:aws:iam::123456789012:role/eso-reader"
	spec.ExternalID = "eso"
	spec.SessionTags = []provv1.AWSSessionTag{{Key: "team", Value: "payments"}}
	if v, err := newClient(t, spec).GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "k"}); err != nil || string(v) != "v" {
		t.Errorf("GetSecret through an assumed role = %q, %v", v, err)
	}
}

func TestMissingCredentialsAreAConfigError(t *testing.T) {
	spec := staticSpec("http://127.0.0.1:1")
	spec.Auth.SecretRef.SecretAccessKey.Key = "absent"
	c := kube(t, spec)
	p := Registration.NewProvider(plugin.Deps{Client: c, APIReader: c})
	err := p.Validate(context.Background(), ref, plugin.Scope{Namespace: "team"})
	if !errors.Is(err, plugin.ErrInvalidConfig) || !strings.Contains(err.Error(), `"absent"`) || strings.Contains(err.Error(), "AKIDEXAMPLE") {
		t.Errorf("Validate = %v", err)
	}
	// In another namespace the same reference finds nothing: credentials never cross namespaces.
	spec = staticSpec("http://127.0.0.1:1")
	c = kube(t, spec)
	p = Registration.NewProvider(plugin.Deps{Client: c, APIReader: c})
	if err := p.Validate(context.Background(), ref, plugin.Scope{Namespace: "other"}); !errors.Is(err, plugin.ErrInvalidConfig) {
		t.Errorf("credentials resolved outside the scope namespace: %v", err)
	}
}

// TestNoAmbientCredentialsByDefault: a configuration without auth may not use
// eso's own AWS identity unless eso was started to allow it.
func TestNoAmbientCredentialsByDefault(t *testing.T) {
	spec := provv1.AWSSpec{Region: region}
	c := kube(t, spec)
	p := Registration.NewProvider(plugin.Deps{Client: c, APIReader: c})
	if err := p.Validate(context.Background(), ref, plugin.Scope{Namespace: "team"}); !errors.Is(err, plugin.ErrNoAmbientCredentials) {
		t.Errorf("Validate without auth = %v, want ErrNoAmbientCredentials", err)
	}
	p = Registration.NewProvider(plugin.Deps{Client: c, APIReader: c, AmbientCredentials: true})
	if err := p.Validate(context.Background(), ref, plugin.Scope{Namespace: "team"}); err != nil {
		t.Errorf("Validate with ambient credentials allowed = %v", err)
	}
}
