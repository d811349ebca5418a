// Package metrics defines eso's Prometheus metrics, served by the manager's
// metrics endpoint. Names and labels follow upstream ESO where it has them, so
// existing dashboards keep working; the eso_* counters show what eso costs the
// API server and the providers (writes, provider calls, logins).
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
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

	// ExternalSecretCondition, StoreCondition, ClusterStoreCondition and
	// PushSecretCondition are 1 for the current status of each condition an
	// object of that kind has, 0 for the others.
	ExternalSecretCondition = conditionGauge("externalsecret", "an ExternalSecret", "namespace")
	StoreCondition          = conditionGauge("secretstore", "a SecretStore", "namespace")
	ClusterStoreCondition   = conditionGauge("clustersecretstore", "a ClusterSecretStore")
	PushSecretCondition     = conditionGauge("pushsecret", "a PushSecret", "namespace")

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
		ClusterStoreCondition, ReconcileDuration, SecretWrites, StatusWrites, RemoteCallDuration)
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

// Since observes the duration of a reconcile that started at start.
func Since(start time.Time, synced bool) {
	label := "false"
	if synced {
		label = "true"
	}
	ReconcileDuration.WithLabelValues(label).Observe(time.Since(start).Seconds())
}

// conditionGauge is upstream's <object>_status_condition gauge, labelled by
// name, the given scope labels, condition and status.
func conditionGauge(object, which string, scope ...string) *prometheus.GaugeVec {
	labels := append(append([]string{"name"}, scope...), "condition", "status")
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: object + "_status_condition",
		Help: "The status of " + which + "'s conditions: 1 for the current status, 0 for the others.",
	}, labels)
}
