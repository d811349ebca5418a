package parameterstore

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/aws/awstest"
	"github.com/eso-dev/eso/providers/plugin"
)

// These tests run the real aws-sdk-go-v2 SSM client against moto_server.

func TestReadAgainstMoto(t *testing.T) {
	ctx := context.Background()
	endpoint := awstest.StartMoto(t)
	seed := ssm.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("seed", "seed", "")},
		func(o *ssm.Options) { o.BaseEndpoint = aws.String(endpoint) })
	put := func(name, value string, typ ssmtypes.ParameterType, tags map[string]string) {
		t.Helper()
		in := &ssm.PutParameterInput{Name: aws.String(name), Value: aws.String(value), Type: typ}
		for k, v := range tags {
			in.Tags = append(in.Tags, ssmtypes.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		if _, err := seed.PutParameter(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	put("/app/db", `{"user":"app","password":"pw-1"}`, ssmtypes.ParameterTypeSecureString, map[string]string{"team": "payments"})
	if _, err := seed.PutParameter(ctx, &ssm.PutParameterInput{Name: aws.String("/app/db"), Value: aws.String(`{"user":"app","password":"pw-2"}`),
		Type: ssmtypes.ParameterTypeSecureString, Overwrite: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	put("/app/api", "token", ssmtypes.ParameterTypeString, map[string]string{"env": "prod"})
	put("/other/x", "y", ssmtypes.ParameterTypeString, nil)

	c := awstest.Kube(t, &provv1.AWSParameterStore{ObjectMeta: metav1.ObjectMeta{Name: "ps"}, Spec: provv1.AWSSpec{
		Region: "us-east-1", Endpoint: endpoint, Prefix: "/app/", Auth: awstest.StaticAuth()}})
	p := Registration.NewProvider(plugin.Deps{Client: c, APIReader: c})
	cl, err := p.NewClient(ctx, plugin.Ref{Kind: Kind, Namespace: awstest.Namespace, Name: "ps"}, plugin.Scope{Namespace: awstest.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	get := func(r esv1.ExternalSecretDataRemoteRef) string {
		t.Helper()
		v, err := cl.GetSecret(ctx, r)
		if err != nil {
			t.Fatalf("GetSecret(%+v): %v", r, err)
		}
		return string(v)
	}
	if got := get(esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "password"}); got != "pw-2" {
		t.Errorf("SecureString property = %q", got)
	}
	if got := get(esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "password", Version: "1"}); got != "pw-1" {
		t.Errorf("version 1 = %q", got)
	}
	if got := get(esv1.ExternalSecretDataRemoteRef{Key: "api", Property: "env", MetadataPolicy: esv1.MetadataPolicyFetch}); got != "prod" {
		t.Errorf("tag = %q", got)
	}
	if _, err := cl.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "nope"}); !errors.Is(err, plugin.ErrSecretNotFound) {
		t.Errorf("missing parameter: %v", err)
	}
	all, err := cl.GetAllSecrets(ctx, esv1.ExternalSecretFind{Name: &esv1.FindName{RegExp: "."}})
	if err != nil || len(all) != 2 || string(all["api"]) != "token" {
		t.Errorf("find under the prefix = %q, %v", all, err)
	}
	tagged, err := cl.GetAllSecrets(ctx, esv1.ExternalSecretFind{Tags: map[string]string{"env": "prod"}})
	if err != nil || len(tagged) != 1 || string(tagged["api"]) != "token" {
		t.Errorf("find by tag = %q, %v", tagged, err)
	}
}

func TestWritesOnlyTouchManagedParameters(t *testing.T) {
	ctx := context.Background()
	endpoint := awstest.StartMoto(t)
	seed := ssm.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("seed", "seed", "")},
		func(o *ssm.Options) { o.BaseEndpoint = aws.String(endpoint) })
	if _, err := seed.PutParameter(ctx, &ssm.PutParameterInput{Name: aws.String("/theirs"), Value: aws.String("precious"), Type: ssmtypes.ParameterTypeString}); err != nil {
		t.Fatal(err)
	}
	c := awstest.Kube(t, &provv1.AWSParameterStore{ObjectMeta: metav1.ObjectMeta{Name: "ps"}, Spec: provv1.AWSSpec{
		Region: "us-east-1", Endpoint: endpoint, Auth: awstest.StaticAuth()}})
	p := Registration.NewProvider(plugin.Deps{Client: c, APIReader: c})
	cl, err := p.NewClient(ctx, plugin.Ref{Kind: Kind, Namespace: awstest.Namespace, Name: "ps"}, plugin.Scope{Namespace: awstest.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	w := cl.(plugin.Writer)
	if err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "/mine", Property: "a", Value: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	if err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "/mine", Property: "b", Value: []byte("2")}); err != nil {
		t.Fatal(err)
	}
	if v, err := cl.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "/mine"}); err != nil || string(v) != `{"a":"1","b":"2"}` {
		t.Errorf("pushed parameter = %s, %v", v, err)
	}
	if err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "/theirs", Value: []byte("x")}); !errors.Is(err, plugin.ErrNotManaged) {
		t.Errorf("push over an unmanaged parameter: %v", err)
	}
	if err := w.DeleteSecret(ctx, "/theirs", ""); !errors.Is(err, plugin.ErrNotManaged) {
		t.Errorf("delete of an unmanaged parameter: %v", err)
	}
	if err := w.DeleteSecret(ctx, "/mine", ""); err != nil {
		t.Fatal(err)
	}
	if ok, err := w.SecretExists(ctx, "/mine"); ok || err != nil {
		t.Errorf("deleted parameter: exists %v, %v", ok, err)
	}
	if v, err := cl.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "/theirs"}); err != nil || string(v) != "precious" {
		t.Errorf("unmanaged parameter = %q, %v", v, err)
	}
}
