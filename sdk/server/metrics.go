package server

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// Metrics are the server's request metrics. Labels are the gRPC service,
// method and status code only: nothing a request carries ends up in a label.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight *prometheus.GaugeVec
}

// NewMetrics creates the metrics and registers them with reg (the
// controller-runtime registry in a process, a fresh one in tests).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "eso_grpc_server_requests_total",
			Help: "gRPC requests served, by service, method and status code.",
		}, []string{"service", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "eso_grpc_server_request_duration_seconds",
			Help:    "Duration of gRPC requests, by service and method.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"service", "method"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "eso_grpc_server_requests_in_flight",
			Help: "gRPC requests being served, by service and method.",
		}, []string{"service", "method"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.inFlight} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// unaryInterceptor counts and times every unary call.
func (m *Metrics) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	service, method := splitMethod(info.FullMethod)
	inFlight := m.inFlight.WithLabelValues(service, method)
	inFlight.Inc()
	start := time.Now()
	resp, err := handler(ctx, req)
	inFlight.Dec()
	m.duration.WithLabelValues(service, method).Observe(time.Since(start).Seconds())
	m.requests.WithLabelValues(service, method, status.Code(err).String()).Inc()
	return resp, err
}

// splitMethod splits "/eso.provider.v1.Info/Handshake" into service and method.
func splitMethod(fullMethod string) (string, string) {
	service, method, ok := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if !ok {
		return "unknown", "unknown"
	}
	return service, method
}
