package integration

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/metrics"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/providers/aws/awstest"
	"github.com/eso-dev/eso/providers/plugin/pluginmetrics"
	"github.com/eso-dev/eso/tests/faultproxy"
	"github.com/eso-dev/eso/tests/testenv"
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

	syncs := func() float64 { return metrics.SyncCalls.Value("app", ns) }
	calls := func() float64 {
		return testutil.ToFloat64(pluginmetrics.ProviderCalls.WithLabelValues("AWSSecretManager", "GetSecret", "success"))
	}
	logins := func() float64 {
		return testutil.ToFloat64(pluginmetrics.ProviderLogins.WithLabelValues("AWSSecretManager", "success"))
	}
	s0, c0, l0 := syncs(), calls(), logins()
	time.Sleep(3500 * time.Millisecond)
	ds, dc, dl := syncs()-s0, calls()-c0, logins()-l0
	if ds < 2 {
		t.Fatalf("only %v refreshes in 3.5s", ds)
	}
	// One read per refresh; a refresh in flight when either count was taken
	// may have read without being counted yet, or the other way round.
	if dc < ds-1 || dc > ds+1 {
		t.Errorf("%v provider reads for %v refreshes: want one read per refresh (one distinct remote secret)", dc, ds)
	}
	if dl != 0 {
		t.Errorf("%v logins during refreshes, want 0", dl)
	}
}

// TestAWSRefusedCredentialsAndOutages runs against a moto_server that
// authenticates like AWS, behind a proxy that can fail. Refused credentials
// make the store AuthenticationFailed with a message free of key material;
// throttling, 5xx answers and dropped connections make the ExternalSecret
// say so while its Secret stays exactly as it was, and it recovers by itself.
func TestAWSRefusedCredentialsAndOutages(t *testing.T) {
	ctx := context.Background()
	endpoint, keyID, secretKey := awstest.StartMotoWithIAM(t)
	seed := sm.NewFromConfig(aws.Config{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider(keyID, secretKey, "")},
		func(o *sm.Options) { o.BaseEndpoint = aws.String(endpoint) })
	if _, err := seed.CreateSecret(ctx, &sm.CreateSecretInput{Name: aws.String("db"), SecretString: aws.String(`{"password":"s3cr3t-value"}`)}); err != nil {
		t.Fatal(err)
	}
	proxy := faultproxy.Start(t, endpoint)

	logged := testenv.CaptureLogs(t)
	runEso(t, testConfig())
	ns := env.Namespace(t, "aws-faults", nil)
	config := func(name, credentials string) *provv1.AWSSecretManager {
		return &provv1.AWSSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: provv1.AWSSpec{
			Region: "eu-central-1", Endpoint: proxy.URL,
			Auth: &provv1.AWSAuth{SecretRef: &provv1.AWSAuthSecretRef{
				AccessKeyID:     provv1.SecretKeySelector{Name: credentials, Key: "id"},
				SecretAccessKey: provv1.SecretKeySelector{Name: credentials, Key: "secret"},
			}},
		}}
	}
	const wrongKey = "wrong-secret-access-key"
	good := secretStore(ns, "good", storeSpec("AWSSecretManager", "good", ""))
	refused := secretStore(ns, "refused", storeSpec("AWSSecretManager", "refused", ""))
	create(t,
		plainSecret(ns, "good-keys", map[string]string{"id": keyID, "secret": secretKey}),
		plainSecret(ns, "wrong-keys", map[string]string{"id": keyID, "secret": wrongKey}),
		config("good", "good-keys"), config("refused", "wrong-keys"), good, refused,
	)
	msg := waitReady(t, refused, metav1.ConditionFalse, ssv2.ReasonAuthenticationFailed)
	if strings.Contains(msg, wrongKey) || strings.Contains(msg, secretKey) {
		t.Fatalf("store condition shows key material: %s", msg)
	}
	waitReady(t, good, metav1.ConditionTrue, ssv2.ReasonValid)

	es := externalSecret(ns, "app", "SecretStore", "good", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "password")})
	create(t, es)
	synced := waitSecretData(t, ns, "app", map[string]string{"password": "s3cr3t-value"})

	faults := map[string]faultproxy.Fault{
		"throttled": {Status: http.StatusBadRequest, Header: map[string]string{"Content-Type": "application/x-amz-json-1.1"},
			Body: `{"__type":"ThrottlingException","message":"Rate exceeded"}`},
		"unavailable": {Status: http.StatusServiceUnavailable, Body: "Service Unavailable"},
		"dropped":     {Drop: true},
	}
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			failedBefore := proxy.Failed()
			proxy.Fail(fault)
			annotate(t, es, "force-sync", name)
			msg := waitReady(t, es, metav1.ConditionFalse, esv1.ReasonSecretSyncedError)
			if strings.Contains(msg, "s3cr3t-value") {
				t.Fatalf("condition shows the secret value: %s", msg)
			}
			if proxy.Failed() == failedBefore {
				t.Fatal("the proxy answered no request with the fault")
			}
			requireUnchanged(t, synced)
			proxy.Pass()
			passed := proxy.Requests("/")
			defer func() {
				if t.Failed() { // did eso try again, or did its tries fail?
					t.Logf("requests through the proxy since it passed again: %d", proxy.Requests("/")-passed)
					t.Logf("eso's log of this test:\n%s", logged())
				}
			}()
			// Retries back off per failure, up to outcomes.MaxBackoff: a
			// slow machine fails more often before the test sees it.
			waitReadyWithin(t, outcomes.MaxBackoff+waitTimeout, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)
		})
	}
}

// TestAWSWebIdentity exchanges a token of a ServiceAccount of the store's
// namespace (TokenRequest against the real API server) for role credentials
// at STS, and reads with them.
func TestAWSWebIdentity(t *testing.T) {
	ctx := context.Background()
	endpoint := awstest.StartMoto(t)
	seed := sm.NewFromConfig(aws.Config{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("seed", "seed", "")},
		func(o *sm.Options) { o.BaseEndpoint = aws.String(endpoint) })
	if _, err := seed.CreateSecret(ctx, &sm.CreateSecretInput{Name: aws.String("db"), SecretString: aws.String(`{"password":"from-web-identity"}`)}); err != nil {
		t.Fatal(err)
	}
	runEso(t, testConfig())
	ns := env.Namespace(t, "aws-irsa", nil)
	store := secretStore(ns, "aws", storeSpec("AWSSecretManager", "aws", ""))
	create(t,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-reader"}},
		&provv1.AWSSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "aws"}, Spec: provv1.AWSSpec{
			Region: "eu-central-1", Endpoint: endpoint, STSEndpoint: endpoint,
			Role: "arn:aws:iam::123456789012:role/app-reader",
			Auth: &provv1.AWSAuth{JWT: &provv1.AWSJWTAuth{ServiceAccountRef: provv1.KubernetesServiceAccount{Name: "app-reader"}}},
		}},
		store,
	)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
	create(t, externalSecret(ns, "app", "SecretStore", "aws", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "password")}))
	waitSecretData(t, ns, "app", map[string]string{"password": "from-web-identity"})

	// Without the ServiceAccount there is no token to exchange: the store says so.
	missing := secretStore(ns, "missing", storeSpec("AWSSecretManager", "missing", ""))
	create(t, &provv1.AWSSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "missing"}, Spec: provv1.AWSSpec{
		Region: "eu-central-1", Endpoint: endpoint, STSEndpoint: endpoint, Role: "arn:aws:iam::123456789012:role/app-reader",
		Auth: &provv1.AWSAuth{JWT: &provv1.AWSJWTAuth{ServiceAccountRef: provv1.KubernetesServiceAccount{Name: "nobody"}}},
	}}, missing)
	msg := waitReady(t, missing, metav1.ConditionFalse, ssv2.ReasonInvalidProviderConfig)
	if !strings.Contains(msg, "nobody") {
		t.Fatalf("message does not name the ServiceAccount: %s", msg)
	}
}
