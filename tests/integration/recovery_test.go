package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers/aws/awstest"
	"github.com/eso-dev/eso/providers/gcp/gcptest"
	"github.com/eso-dev/eso/providers/gcp/secretmanager"
	"github.com/eso-dev/eso/providers/kubernetes"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
	"github.com/eso-dev/eso/tests/faultproxy"
)

// TestVaultOutageAndRecovery: a Vault server behind a proxy stops
// answering (sealed, 503; dropped connections). The ExternalSecret says the
// provider fails, its Secret stays byte-identical, the store keeps its
// Ready verdict through the outage; once Vault answers again everything
// syncs by itself within the wait bound, without an annotation, and goes on
// refreshing.
func TestVaultOutageAndRecovery(t *testing.T) {
	root := vaulttest.Start(t)
	if _, err := root.Logical().Write("secret/data/app/db", map[string]any{"data": map[string]any{"password": "s3cr3t-value"}}); err != nil {
		t.Fatal(err)
	}
	proxy := faultproxy.Start(t, root.Address())
	runEso(t, testConfig())
	ns := env.Namespace(t, "vault-outage", nil)
	store := secretStore(ns, "vault", storeSpec("Vault", "vault", ""))
	create(t,
		plainSecret(ns, "vault-token", map[string]string{"token": vaulttest.RootToken}),
		&provv1.Vault{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault"}, Spec: provv1.VaultSpec{
			Server: proxy.URL, Path: "secret", Version: "v2",
			Auth: provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault-token", Key: "token"}}}},
		store,
	)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
	es := externalSecret(ns, "app", "SecretStore", "vault", map[string]esv1.ExternalSecretDataRemoteRef{"pw": ref("app/db", "password")})
	es.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second}
	create(t, es)
	synced := waitSecretData(t, ns, "app", map[string]string{"pw": "s3cr3t-value"})

	for _, c := range []struct {
		name  string
		fault faultproxy.Fault
	}{
		{"sealed", vaulttest.Outage(http.StatusServiceUnavailable)},
		{"dropped", faultproxy.Fault{Drop: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			failedBefore := proxy.Failed()
			proxy.Fail(c.fault)
			msg := waitReady(t, es, metav1.ConditionFalse, esv1.ReasonSecretSyncedError)
			if strings.Contains(msg, "s3cr3t-value") {
				t.Fatalf("condition shows the value: %s", msg)
			}
			if proxy.Failed() == failedBefore {
				t.Fatal("the proxy answered no request with the fault")
			}
			requireUnchanged(t, synced)
			waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
			proxy.Pass()
			waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)
			// Refreshes go on after the outage (a sync slower than the
			// interval once left the next refresh unscheduled).
			before := proxy.Requests("/v1/secret/data/app/db")
			eventually(t, "refreshes after the outage", func() error {
				if n := proxy.Requests("/v1/secret/data/app/db") - before; n < 2 {
					return fmt.Errorf("%d reads since the recovery", n)
				}
				return nil
			})
		})
	}
}

// Bounds of TestProviderOutageAndRecovery, from the moment the proxy fails or
// passes again; generous for a loaded machine.
const (
	// outageBound: an ExternalSecret refreshing every second meets the
	// outage at its next sync, which fails once the client's own retries are
	// spent: the AWS SDK's three attempts (under 3 s of backoff), client-go's
	// ten tries of a GET whose connection was reset, 1 s apart (about 11 s).
	outageBound = 25 * time.Second
	// recoveryBound: a failed sync or store validation is retried with the
	// controller's per-object exponential backoff (5 ms, doubling: each wait
	// is the sum of the earlier ones), so the first try after the outage
	// comes within the time the object spent waiting in backoff during it,
	// a few seconds here since the failing calls take most of it; gRPC's
	// reconnect backoff (1 s, ×1.6, jittered) is of the same order. A watch
	// event (its store turning Ready) brings an ExternalSecret's retry
	// forward.
	recoveryBound = 30 * time.Second
)

// outage is one provider server behind a fault proxy.
type outage struct {
	name string
	// kind is the provider configuration kind; config is the configuration
	// both stores of the case use, reaching the server through the proxy.
	kind   string
	config client.Object
	// ref is the remote secret the ExternalSecrets read, value its value.
	ref   esv1.ExternalSecretDataRemoteRef
	value string
	// unreachable is what a failed sync's message says: the server
	// could not be reached.
	unreachable string
	// fail and pass switch the proxies; failed counts the requests or
	// connections they refused so far.
	fail, pass func()
	failed     func() int64
	// storeCallsServer: validating a store calls the server, so a store
	// created during the outage cannot be Ready.
	storeCallsServer bool
}

// TestProviderOutageAndRecovery: for every provider kind with a server (the
// Fake provider has none; Vault has TestVaultOutageAndRecovery), the server
// becomes unreachable behind a fault proxy that drops every connection. The
// ExternalSecret, refreshing every second, says its sync failed while its
// Secret stays as it was and its store stays Ready; a store created during the
// outage shows the failing check as Unknown (unless validating it calls no
// server) and its ExternalSecret fails. Once the proxy passes again, both
// stores and both ExternalSecrets become Ready by themselves: no annotation,
// no restart. The cases share one eso and run in parallel.
func TestProviderOutageAndRecovery(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t, "outage", nil)
	create(t, plainSecret(ns, "aws-creds", map[string]string{"id": "AKIDEXAMPLE", "secret": "example"}))
	awsSpec := func(endpoint string) provv1.AWSSpec {
		return provv1.AWSSpec{Region: "eu-central-1", Endpoint: endpoint, Auth: &provv1.AWSAuth{SecretRef: &provv1.AWSAuthSecretRef{
			AccessKeyID:     provv1.SecretKeySelector{Name: "aws-creds", Key: "id"},
			SecretAccessKey: provv1.SecretKeySelector{Name: "aws-creds", Key: "secret"},
		}}}
	}
	httpOutage := func(c outage, p *faultproxy.Proxy) outage {
		c.fail, c.pass, c.failed = func() { p.Fail(faultproxy.Fault{Drop: true}) }, p.Pass, p.Failed
		return c
	}

	// AWS: one moto serves both services, each behind its own proxy.
	moto := awstest.StartMoto(t)
	seed := aws.Config{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("seed", "seed", "")}
	if _, err := sm.NewFromConfig(seed, func(o *sm.Options) { o.BaseEndpoint = aws.String(moto) }).CreateSecret(ctx,
		&sm.CreateSecretInput{Name: aws.String("db"), SecretString: aws.String("sm-s3cr3t")}); err != nil {
		t.Fatal(err)
	}
	if _, err := ssm.NewFromConfig(seed, func(o *ssm.Options) { o.BaseEndpoint = aws.String(moto) }).PutParameter(ctx,
		&ssm.PutParameterInput{Name: aws.String("db"), Value: aws.String("ps-s3cr3t"), Type: ssmtypes.ParameterTypeSecureString}); err != nil {
		t.Fatal(err)
	}
	smProxy, psProxy := faultproxy.Start(t, moto), faultproxy.Start(t, moto)

	// GCP: Secret Manager (gRPC) and the token endpoint both unreachable, as
	// when Google is.
	gcp, _ := gcptest.Start(t)
	tokens := gcp.StartTokenEndpoint(t)
	gcp.Add("projects/p/secrets/db", []byte("gcp-s3cr3t"), nil)
	gcpProxy := faultproxy.StartTCP(t, gcp.Addr)
	tokenProxy := faultproxy.Start(t, strings.TrimSuffix(tokens.URL, "/token"))
	tokens.URL = tokenProxy.URL + "/token" // the token_uri of the keys issued from now on
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gcp-key"},
		Data: map[string][]byte{"key.json": tokens.Key(t, "eso@p.iam.gserviceaccount.com")}})

	// Kubernetes: the provider (not the rest of eso) reaches the API server
	// through the proxy, TLS end to end.
	apiServer, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	kubeProxy := faultproxy.StartTCP(t, apiServer.Host)
	proxied := rest.CopyConfig(esoIdentity(t))
	proxied.Host = "https://" + kubeProxy.Addr
	proxiedReader, err := client.New(proxied, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	create(t, plainSecret(ns, "k8s-db", map[string]string{"password": "k8s-s3cr3t"}))

	cfg := testConfig()
	cfg.Namespace = ns
	runEso(t, cfg, withProviders(map[string]func(plugin.Deps) plugin.Provider{
		secretmanager.Kind: gcpProvider(nil),
		kubernetes.Kind: func(d plugin.Deps) plugin.Provider {
			d.APIReader, d.RESTConfig = proxiedReader, proxied
			return kubernetes.Registration.NewProvider(d)
		},
	}))

	cases := []outage{
		httpOutage(outage{name: "aws-secretsmanager", kind: "AWSSecretManager", ref: ref("db", ""), value: "sm-s3cr3t", unreachable: "request send failed", storeCallsServer: true,
			config: &provv1.AWSSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sm"}, Spec: awsSpec(smProxy.URL)}}, smProxy),
		httpOutage(outage{name: "aws-parameterstore", kind: "AWSParameterStore", ref: ref("db", ""), value: "ps-s3cr3t", unreachable: "request send failed", storeCallsServer: true,
			config: &provv1.AWSParameterStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ps"}, Spec: awsSpec(psProxy.URL)}}, psProxy),
		{name: "gcp-secretmanager", kind: "GCPSecretManager", ref: ref("db", ""), value: "gcp-s3cr3t", unreachable: "code = Unavailable", storeCallsServer: true,
			config: gcpKeyConfig(ns, "gcp", gcpProxy.Addr, "gcp-key"),
			fail:   func() { tokenProxy.Fail(faultproxy.Fault{Drop: true}); gcpProxy.Fail() },
			pass:   func() { gcpProxy.Pass(); tokenProxy.Pass() },
			failed: func() int64 { return gcpProxy.Failed() + tokenProxy.Failed() }},
		// Validating a Kubernetes store resolves its namespace and calls no
		// server: a store created during the outage is Ready.
		{name: "kubernetes", kind: "Kubernetes", ref: ref("k8s-db", "password"), value: "k8s-s3cr3t", unreachable: kubeProxy.Addr,
			config: &provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kubernetes"}},
			fail:   kubeProxy.Fail, pass: kubeProxy.Pass, failed: kubeProxy.Failed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			testOutage(t, ns, c)
		})
	}
}

func testOutage(t *testing.T, ns string, c outage) {
	newStore := func(name string) *ssv2.SecretStore {
		return secretStore(ns, c.name+"-"+name, storeSpec(c.kind, c.config.GetName(), ""))
	}
	newExternalSecret := func(store *ssv2.SecretStore) *esv1.ExternalSecret {
		es := externalSecret(ns, store.Name, "SecretStore", store.Name, map[string]esv1.ExternalSecretDataRemoteRef{"value": c.ref})
		es.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second}
		return es
	}
	noValue := func(what, msg string) {
		t.Helper()
		if strings.Contains(msg, c.value) {
			t.Fatalf("%s shows the secret value: %s", what, msg)
		}
	}
	syncFailed := func(es *esv1.ExternalSecret) string {
		t.Helper()
		msg := waitReadyWithin(t, outageBound, es, metav1.ConditionFalse, esv1.ReasonSecretSyncedError)
		noValue("the ExternalSecret's condition", msg)
		if !strings.Contains(msg, c.unreachable) {
			t.Fatalf("the ExternalSecret's condition does not say %q: %s", c.unreachable, msg)
		}
		return msg
	}

	// Reachable: the store is Ready, the ExternalSecret syncs.
	store := newStore("first")
	create(t, c.config, store)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)
	es := newExternalSecret(store)
	create(t, es)
	synced := waitSecretData(t, ns, es.Name, map[string]string{"value": c.value})

	// Unreachable: the ExternalSecret says its sync failed, its Secret and
	// its store's verdict stay as they were.
	failedBefore := c.failed()
	c.fail()
	outageStart := time.Now()
	msg := syncFailed(es)
	t.Logf("ExternalSecret failed after %v: %s", time.Since(outageStart).Round(time.Millisecond), msg)
	if c.failed() == failedBefore {
		t.Fatal("the proxy refused nothing")
	}
	requireUnchanged(t, synced)
	waitReady(t, store, metav1.ConditionTrue, ssv2.ReasonValid)

	// A store and ExternalSecret created during the outage show its cause.
	late := newStore("late")
	lateES := newExternalSecret(late)
	create(t, late, lateES)
	if c.storeCallsServer {
		msg := waitReadyWithin(t, outageBound, late, metav1.ConditionUnknown, ssv2.ReasonValidationFailed)
		noValue("the new store's condition", msg)
		t.Logf("new store: %s", msg)
	} else {
		waitReady(t, late, metav1.ConditionTrue, ssv2.ReasonValid)
	}
	t.Logf("new ExternalSecret: %s", syncFailed(lateES))
	if secretExists(t, ns, lateES.Name) {
		t.Fatalf("Secret %s was written during the outage", lateES.Name)
	}
	requireUnchanged(t, synced)

	// Reachable again: everything is Ready by itself.
	c.pass()
	outage := time.Since(outageStart)
	ready := waitAllReady(t, recoveryBound, store, late, es, lateES)
	waitSecretData(t, ns, lateES.Name, map[string]string{"value": c.value})
	requireUnchanged(t, synced)
	t.Logf("outage of %v; Ready again after: %s", outage.Round(time.Millisecond), ready)
}

// waitAllReady waits up to d until every store is Ready/Valid and every
// ExternalSecret Ready/SecretSynced, and says how long each took.
func waitAllReady(t *testing.T, d time.Duration, objs ...client.Object) string {
	t.Helper()
	start := time.Now()
	took := make([]time.Duration, len(objs))
	eventuallyWithin(t, d, "all Ready", func() error {
		var errs []error
		for i, obj := range objs {
			if took[i] > 0 {
				continue
			}
			if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			reason := ssv2.ReasonValid
			if _, ok := obj.(*esv1.ExternalSecret); ok {
				reason = esv1.ReasonSecretSynced
			}
			if c := meta.FindStatusCondition(conditions(obj), "Ready"); c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
				errs = append(errs, fmt.Errorf("%T %s: %v", obj, obj.GetName(), c))
				continue
			}
			took[i] = time.Since(start)
		}
		return errors.Join(errs...)
	})
	var out []string
	for i, obj := range objs {
		out = append(out, fmt.Sprintf("%T %s %v", obj, obj.GetName(), took[i].Round(time.Millisecond)))
	}
	return strings.Join(out, ", ")
}
