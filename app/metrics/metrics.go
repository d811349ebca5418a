// Package metrics defines eso's Prometheus metrics, served by the manager's
// metrics endpoint. Names and labels follow upstream ESO where it has them, so
// existing dashboards keep working; the eso_* counters show what eso costs the
// API server and the providers (writes, provider calls, logins).
package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

var (
	// SyncCalls counts ExternalSecret syncs that read the provider.
	SyncCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "externalsecret_sync_calls_total",
		Help: "Total number of ExternalSecret syncs that read the provider.",
	}, []string{"name", "namespace"})

	// SyncErrors counts failed ExternalSecret syncs.
	SyncErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "externalsecret_sync_calls_error",
		Help: "Total number of failed ExternalSecret syncs.",
	}, []string{"name", "namespace"})

	// ExternalSecretCondition is 1 for the status of each condition an ExternalSecret has.
	ExternalSecretCondition = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "externalsecret_status_condition",
		Help: "The status of an ExternalSecret's conditions: 1 for the current status, 0 for the others.",
	}, []string{"name", "namespace", "condition", "status"})

	// StoreCondition is the same for SecretStores.
	StoreCondition = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secretstore_status_condition",
		Help: "The status of a SecretStore's conditions: 1 for the current status, 0 for the others.",
	}, []string{"name", "namespace", "condition", "status"})

	// ClusterStoreCondition is the same for ClusterSecretStores.
	ClusterStoreCondition = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "clustersecretstore_status_condition",
		Help: "The status of a ClusterSecretStore's conditions: 1 for the current status, 0 for the others.",
	}, []string{"name", "condition", "status"})

	// PushSecretCondition is the same for PushSecrets (upstream's name).
	PushSecretCondition = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "pushsecret_status_condition",
		Help: "The status of a PushSecret's conditions: 1 for the current status, 0 for the others.",
	}, []string{"name", "namespace", "condition", "status"})

	// ReconcileDuration is how long ExternalSecret reconciles take.
	ReconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "externalsecret_reconcile_duration_seconds",
		Help:    "Duration of ExternalSecret reconciles, by whether they read the provider.",
		Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"synced"})

	// RemoteCallDuration times each call (attempt) core makes to a provider
	// process, as core sees it: network and TLS included.
	RemoteCallDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "eso_grpc_client_request_duration_seconds",
		Help:    "Duration of calls to out-of-process providers, by method and status code.",
		Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
	}, []string{"method", "code"})

	// ProviderCalls counts calls to providers.
	ProviderCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "externalsecret_provider_api_calls_count",
		Help: "Number of calls to providers, by provider kind, call and outcome.",
	}, []string{"provider", "call", "status"})

	// ProviderErrors counts failed provider calls by error class
	// (plugin.Class), the taxonomy conditions and the gRPC wire use too.
	ProviderErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "eso_provider_errors_total",
		Help: "Failed calls to providers and logins (call NewClient), by provider kind, call and error class (AuthFailed, SecretNotFound, Throttled, Unavailable, ...).",
	}, []string{"provider", "call", "class"})

	// ProviderLogins counts provider clients built: each is a login or
	// credential exchange with the provider.
	ProviderLogins = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "eso_provider_client_builds_total",
		Help: "Provider clients built (logins); clients are reused while their store is unchanged.",
	}, []string{"provider", "status"})

	// SecretWrites counts writes to target Secrets.
	SecretWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "eso_secret_writes_total",
		Help: "Writes to target Secrets, by operation (create, update, delete).",
	}, []string{"operation"})

	// StatusWrites counts status writes.
	StatusWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "eso_status_writes_total",
		Help: "Status writes, by kind of object.",
	}, []string{"kind"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(SyncCalls, SyncErrors, ExternalSecretCondition, StoreCondition, PushSecretCondition,
		ClusterStoreCondition, ReconcileDuration, ProviderCalls, ProviderErrors, ProviderLogins, SecretWrites, StatusWrites, RemoteCallDuration)
}

var conditionStatuses = []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}

// SetConditions records conditions on gauge for one object; labels are the
// object's identifying label values (name, namespace).
func SetConditions(gauge *prometheus.GaugeVec, conds []metav1.Condition, labels ...string) {
	for _, c := range conds {
		for _, s := range conditionStatuses {
			v := 0.0
			if c.Status == s {
				v = 1
			}
			gauge.WithLabelValues(append(append([]string{}, labels...), c.Type, string(s))...).Set(v)
		}
	}
}

// ForgetCondition drops the series of one condition type of one object
// (labels as for SetConditions): for a condition the object no longer
// carries, whose series would otherwise keep its last status. Series that
// do not exist are no matter.
func ForgetCondition(gauge *prometheus.GaugeVec, condition string, labels ...string) {
	for _, s := range conditionStatuses {
		gauge.DeleteLabelValues(append(append([]string{}, labels...), condition, string(s))...)
	}
}

// ForgetExternalSecret drops the series of a deleted ExternalSecret.
func ForgetExternalSecret(name, namespace string) {
	SyncCalls.DeleteLabelValues(name, namespace)
	SyncErrors.DeleteLabelValues(name, namespace)
	ExternalSecretCondition.DeletePartialMatch(prometheus.Labels{"name": name, "namespace": namespace})
}

// ForgetPushSecret drops the series of a deleted PushSecret.
func ForgetPushSecret(name, namespace string) {
	PushSecretCondition.DeletePartialMatch(prometheus.Labels{"name": name, "namespace": namespace})
}

// ForgetStore drops the series of a deleted store (namespace empty for a ClusterSecretStore).
func ForgetStore(name, namespace string) {
	if namespace == "" {
		ClusterStoreCondition.DeletePartialMatch(prometheus.Labels{"name": name})
		return
	}
	StoreCondition.DeletePartialMatch(prometheus.Labels{"name": name, "namespace": namespace})
}

// InstrumentClient counts the calls made through c. What c promises about
// its properties (plugin.JSONProperties) is kept.
func InstrumentClient(kind string, c plugin.SecretsClient) plugin.SecretsClient {
	ic := &instrumentedClient{SecretsClient: c, kind: kind}
	if _, ok := c.(plugin.JSONProperties); ok {
		return &instrumentedJSONClient{ic}
	}
	return ic
}

type instrumentedJSONClient struct{ *instrumentedClient }

func (*instrumentedJSONClient) PropertiesAreJSONPaths() {}

type instrumentedClient struct {
	plugin.SecretsClient
	kind string
}

func (c *instrumentedClient) GetSecret(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	v, err := c.SecretsClient.GetSecret(ctx, ref)
	countCall(c.kind, "GetSecret", err)
	return v, err
}

func (c *instrumentedClient) GetSecretMap(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) (map[string][]byte, error) {
	v, err := c.SecretsClient.GetSecretMap(ctx, ref)
	countCall(c.kind, "GetSecretMap", err)
	return v, err
}

func (c *instrumentedClient) GetAllSecrets(ctx context.Context, find esv1.ExternalSecretFind) (map[string][]byte, error) {
	v, err := c.SecretsClient.GetAllSecrets(ctx, find)
	countCall(c.kind, "GetAllSecrets", err)
	return v, err
}

// PushSecret, DeleteSecret and SecretExists forward the write side of the
// contract, counted; a read-only client answers ErrNotSupported, as its
// Capabilities say.
func (c *instrumentedClient) PushSecret(ctx context.Context, req plugin.PushRequest) error {
	w, err := c.writer()
	if err == nil {
		err = w.PushSecret(ctx, req)
	}
	countCall(c.kind, "PushSecret", err)
	return err
}

func (c *instrumentedClient) DeleteSecret(ctx context.Context, remoteKey, property string) error {
	w, err := c.writer()
	if err == nil {
		err = w.DeleteSecret(ctx, remoteKey, property)
	}
	countCall(c.kind, "DeleteSecret", err)
	return err
}

func (c *instrumentedClient) SecretExists(ctx context.Context, remoteKey string) (bool, error) {
	w, err := c.writer()
	exists := false
	if err == nil {
		exists, err = w.SecretExists(ctx, remoteKey)
	}
	countCall(c.kind, "SecretExists", err)
	return exists, err
}

func (c *instrumentedClient) writer() (plugin.Writer, error) {
	if w, ok := c.SecretsClient.(plugin.Writer); ok {
		return w, nil
	}
	return nil, fmt.Errorf("%w: %s clients do not write", plugin.ErrNotSupported, c.kind)
}

// CheckAuth runs the provider's credential check (plugin.AuthChecker),
// counted like any other call. A client without one has nothing to check.
func (c *instrumentedClient) CheckAuth(ctx context.Context) error {
	checker, ok := c.SecretsClient.(plugin.AuthChecker)
	if !ok {
		return nil
	}
	err := checker.CheckAuth(ctx)
	countCall(c.kind, "CheckAuth", err)
	return err
}

func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "success"
}

// CountLogin counts one provider client built (a login): success or
// error, and a failure by its class.
func CountLogin(kind string, err error) {
	ProviderLogins.WithLabelValues(kind, outcome(err)).Inc()
	if err != nil {
		ProviderErrors.WithLabelValues(kind, "NewClient", string(plugin.ClassOf(err))).Inc()
	}
}

// countCall counts one provider call: upstream's success/error count, and
// failures by class.
func countCall(kind, call string, err error) {
	ProviderCalls.WithLabelValues(kind, call, outcome(err)).Inc()
	if err != nil {
		ProviderErrors.WithLabelValues(kind, call, string(plugin.ClassOf(err))).Inc()
	}
}

// Since observes the duration of a reconcile that started at start.
func Since(start time.Time, synced bool) {
	label := "false"
	if synced {
		label = "true"
	}
	ReconcileDuration.WithLabelValues(label).Observe(time.Since(start).Seconds())
}
