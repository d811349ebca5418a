package integration

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers/aws/awstest"
)

// TestAWSSecretsManagerSync runs eso with the AWS Secrets Manager provider
// against moto_server: static credentials from a Secret of the store's
// namespace, data with a property and dataFrom extract.
func TestAWSSecretsManagerSync(t *testing.T) {
	ctx := context.Background()
	endpoint := awstest.StartMoto(t)
	seed := sm.NewFromConfig(aws.Config{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("seed", "seed", "")},
		func(o *sm.Options) { o.BaseEndpoint = aws.String(endpoint) })
	if _, err := seed.CreateSecret(ctx, &sm.CreateSecretInput{Name: aws.String("app/db"), SecretString: aws.String(`{"user":"app","password":"pw"}`)}); err != nil {
		t.Fatal(err)
	}

	runEso(t, testConfig())
	ns := env.Namespace(t, "aws", nil)
	store := secretStore(ns, "aws", storeSpec("AWSSecretManager", "aws", ""))
	create(t,
		plainSecret(ns, "aws-creds", map[string]string{"id": "AKIDEXAMPLE", "secret": "example"}),
		&provv1.AWSSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "aws"}, Spec: provv1.AWSSpec{
			Region: "eu-central-1", Endpoint: endpoint, Prefix: "app/",
			Auth: &provv1.AWSAuth{SecretRef: &provv1.AWSAuthSecretRef{
				AccessKeyID:     provv1.SecretKeySelector{Name: "aws-creds", Key: "id"},
				SecretAccessKey: provv1.SecretKeySelector{Name: "aws-creds", Key: "secret"},
			}},
		}},
		store,
	)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
	es := externalSecret(ns, "app", "SecretStore", "aws", map[string]esv1.ExternalSecretDataRemoteRef{"pw": ref("db", "password")})
	es.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{{Extract: &esv1.ExternalSecretDataRemoteRef{Key: "db"}}}
	create(t, es)
	waitSecretData(t, ns, "app", map[string]string{"pw": "pw", "user": "app", "password": "pw"})

	// A store whose credentials Secret is missing says so, naming the Secret.
	broken := secretStore(ns, "broken", storeSpec("AWSSecretManager", "broken", ""))
	create(t, &provv1.AWSSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "broken"}, Spec: provv1.AWSSpec{
		Region: "eu-central-1", Endpoint: endpoint,
		Auth: &provv1.AWSAuth{SecretRef: &provv1.AWSAuthSecretRef{
			AccessKeyID:     provv1.SecretKeySelector{Name: "missing", Key: "id"},
			SecretAccessKey: provv1.SecretKeySelector{Name: "missing", Key: "secret"},
		}},
	}}, broken)
	waitReady(t, broken, metav1.ConditionFalse, ssv2.ReasonInvalidProviderConfig)
}
