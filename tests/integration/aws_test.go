package integration

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/metrics"
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

// TestAWSRefreshEconomy: with nothing changed, each refresh of an
// ExternalSecret using three properties and an extract of one secret costs one
// provider read and no login.
func TestAWSRefreshEconomy(t *testing.T) {
	ctx := context.Background()
	endpoint := awstest.StartMoto(t)
	seed := sm.NewFromConfig(aws.Config{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("seed", "seed", "")},
		func(o *sm.Options) { o.BaseEndpoint = aws.String(endpoint) })
	if _, err := seed.CreateSecret(ctx, &sm.CreateSecretInput{Name: aws.String("db"), SecretString: aws.String(`{"user":"app","password":"pw","host":"db"}`)}); err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t, "aws-economy", nil)
	cfg := testConfig()
	cfg.Namespace = ns
	runEso(t, cfg)
	create(t,
		plainSecret(ns, "aws-creds", map[string]string{"id": "AKIDEXAMPLE", "secret": "example"}),
		&provv1.AWSSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "aws"}, Spec: provv1.AWSSpec{
			Region: "eu-central-1", Endpoint: endpoint, Auth: &provv1.AWSAuth{SecretRef: &provv1.AWSAuthSecretRef{
				AccessKeyID:     provv1.SecretKeySelector{Name: "aws-creds", Key: "id"},
				SecretAccessKey: provv1.SecretKeySelector{Name: "aws-creds", Key: "secret"},
			}},
		}},
		secretStore(ns, "aws", storeSpec("AWSSecretManager", "aws", "")),
	)
	es := externalSecret(ns, "app", "SecretStore", "aws", map[string]esv1.ExternalSecretDataRemoteRef{
		"u": ref("db", "user"), "p": ref("db", "password"), "h": ref("db", "host"),
	})
	es.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{{Extract: &esv1.ExternalSecretDataRemoteRef{Key: "db"}}}
	es.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second}
	create(t, es)
	waitSecretData(t, ns, "app", map[string]string{"u": "app", "p": "pw", "h": "db", "user": "app", "password": "pw", "host": "db"})

	syncs := func() float64 { return testutil.ToFloat64(metrics.SyncCalls.WithLabelValues("app", ns)) }
	calls := func() float64 {
		return testutil.ToFloat64(metrics.ProviderCalls.WithLabelValues("AWSSecretManager", "GetSecret", "success"))
	}
	logins := func() float64 {
		return testutil.ToFloat64(metrics.ProviderLogins.WithLabelValues("AWSSecretManager", "success"))
	}
	s0, c0, l0 := syncs(), calls(), logins()
	time.Sleep(3500 * time.Millisecond)
	ds, dc, dl := syncs()-s0, calls()-c0, logins()-l0
	if ds < 2 {
		t.Fatalf("only %v refreshes in 3.5s", ds)
	}
	if dc != ds {
		t.Errorf("%v provider reads for %v refreshes: want exactly one read per refresh (one distinct remote secret)", dc, ds)
	}
	if dl != 0 {
		t.Errorf("%v logins during refreshes, want 0", dl)
	}
}
