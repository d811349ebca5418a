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
	// ExternalSecrets, Stores, ClusterStores and PushSecrets are the
	// series of each object of their kind: <object>_status_condition, 1
	// for the current status of each condition an object has, 0 for the
	// others, and for ExternalSecrets SyncCalls and SyncErrors.
	ExternalSecrets = newObjects("externalsecret", "an ExternalSecret", true)
	Stores          = newObjects("secretstore", "a SecretStore", true)
	ClusterStores   = newObjects("clustersecretstore", "a ClusterSecretStore", false)
	PushSecrets     = newObjects("pushsecret", "a PushSecret", true)

	// SyncCalls counts ExternalSecret syncs that read the provider.
	SyncCalls = ExternalSecrets.counter("externalsecret_sync_calls_total", "Total number of ExternalSecret syncs that read the provider.")
	// SyncErrors counts failed ExternalSecret syncs.
	SyncErrors = ExternalSecrets.counter("externalsecret_sync_calls_error", "Total number of failed ExternalSecret syncs.")

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

	// EventsDropped counts Events not recorded for being over the
	// process's budget (package events).
	EventsDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "eso_events_dropped_total",
		Help: "Events not recorded because they were over the process's budget, by type (Normal).",
	}, []string{"type"})
)

// Sharding (--shards auto): what this replica works and how handovers go.
var (
	// ShardNamespaces is how many namespaces this replica works.
	ShardNamespaces = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "eso_shard_namespaces_owned",
		Help: "Namespaces this replica works (--shards auto).",
	})
	// ShardMembers is how many replicas share the work, as this one sees them.
	ShardMembers = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "eso_shard_members",
		Help: "Live replicas sharing the work, as this replica sees them.",
	})
	// ShardHandovers counts namespaces this replica gained or released.
	ShardHandovers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "eso_shard_handovers_total",
		Help: "Namespaces this replica started (gained) or stopped (released) working.",
	}, []string{"direction"})
	// ShardUnworked is, for each namespace this replica gained from
	// another, how long no replica worked it.
	ShardUnworked = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "eso_shard_handover_unworked_seconds",
		Help:    "For each namespace gained from another replica, how long no replica worked it.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 20, 30, 60, 120},
	})
	// ShardFences counts the times this replica stopped all work because
	// it could not renew its Lease in time.
	ShardFences = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "eso_shard_fenced_total",
		Help: "Times this replica stopped all work because it could not renew its Lease in time.",
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(ExternalSecrets, Stores, ClusterStores, PushSecrets, ReconcileDuration, SecretWrites, StatusWrites, EventsDropped, RemoteCallDuration,
		ShardNamespaces, ShardMembers, ShardHandovers, ShardUnworked, ShardFences)
}

var conditionStatuses = []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}

// Since observes the duration of a reconcile that started at start.
func Since(start time.Time, synced bool) {
	label := "false"
	if synced {
		label = "true"
	}
	ReconcileDuration.WithLabelValues(label).Observe(time.Since(start).Seconds())
}

// ForgetStore drops the series of a deleted store (namespace empty for a ClusterSecretStore).
func ForgetStore(name, namespace string) {
	if namespace == "" {
		ClusterStores.Forget(name, "")
		return
	}
	Stores.Forget(name, namespace)
}
