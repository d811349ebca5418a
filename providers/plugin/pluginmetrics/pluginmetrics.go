// Package pluginmetrics counts what eso asks of its plugins, in core and
// in a provider process alike: calls by outcome and error class, and
// logins. Names and labels follow upstream ESO where it has them.
package pluginmetrics

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

var (
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
)

func init() {
	ctrlmetrics.Registry.MustRegister(ProviderCalls, ProviderErrors, ProviderLogins)
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

// Login is what core and the provider server make of a provider client
// just built, c or err: the login counted (success or error, a failure by
// its class), and c with its calls counted (InstrumentClient).
func Login(kind string, c plugin.SecretsClient, err error) (plugin.SecretsClient, error) {
	ProviderLogins.WithLabelValues(kind, outcome(err)).Inc()
	if err != nil {
		ProviderErrors.WithLabelValues(kind, "NewClient", string(plugin.ClassOf(err))).Inc()
		return nil, err
	}
	return InstrumentClient(kind, c), nil
}

// countCall counts one provider call: upstream's success/error count, and
// failures by class.
func countCall(kind, call string, err error) {
	ProviderCalls.WithLabelValues(kind, call, outcome(err)).Inc()
	if err != nil {
		ProviderErrors.WithLabelValues(kind, call, string(plugin.ClassOf(err))).Inc()
	}
}
