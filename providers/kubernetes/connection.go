package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	authnv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

const (
	// tokenLifetime is what eso asks for a ServiceAccount token; the API
	// server may grant less.
	tokenLifetime = time.Hour
	// tokenRenewBefore renews a token this long before it expires.
	tokenRenewBefore = 5 * time.Minute
	// callTimeout bounds one provider call, client-go's own retries of a
	// 429 or 5xx (which a server may ask to delay) included: a server that
	// answers slowly holds a sync that long at most.
	callTimeout = 30 * time.Second
)

// connection reads and writes Secrets as the identity a configuration's
// auth names, never eso's own: a ServiceAccount's token requested from this
// cluster, a bearer token or a client certificate from Secrets of the
// credentials namespace. It talks to server.url, or to this cluster's API
// server when there is none.
//
// Credentials, and the CA trusted for server.url, are read when the
// connection is first used and read again when a ServiceAccount token is
// about to expire, or after the server refused the credentials (401) or
// presented a certificate the CA does not verify: a rotated token, client
// certificate or CA is picked up at the next call.
type connection struct {
	deps        plugin.Deps
	spec        *provv1.KubernetesSpec
	credentials string // the credentials namespace

	mu      sync.Mutex
	core    corev1client.CoreV1Interface
	authn   authnv1client.AuthenticationV1Interface
	http    *http.Client
	expires time.Time // zero: until the server refuses the credentials
	stale   bool
}

func newConnection(deps plugin.Deps, spec *provv1.KubernetesSpec, credentialsNamespace string) *connection {
	return &connection{deps: deps, spec: spec, credentials: credentialsNamespace}
}

// clients returns the API clients, (re)building them when there are none
// yet, a ServiceAccount token is about to expire, or the last call said the
// credentials or the CA are no longer good.
func (c *connection) clients(ctx context.Context) (corev1client.CoreV1Interface, authnv1client.AuthenticationV1Interface, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.core != nil && !c.stale && (c.expires.IsZero() || time.Until(c.expires) > tokenRenewBefore) {
		return c.core, c.authn, nil
	}
	cfg, expires, err := c.restConfig(ctx)
	if err != nil {
		return nil, nil, err
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: a client for %s: %v", plugin.ErrInvalidConfig, c.serverName(), err)
	}
	core, err := corev1client.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: a client for %s: %v", plugin.ErrInvalidConfig, c.serverName(), err)
	}
	authn, err := authnv1client.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: a client for %s: %v", plugin.ErrInvalidConfig, c.serverName(), err)
	}
	if c.http != nil {
		c.http.CloseIdleConnections()
	}
	c.core, c.authn, c.http, c.expires, c.stale = core, authn, httpClient, expires, false
	return core, authn, nil
}

// observe marks the connection stale after an answer that says its
// credentials or CA should be read again.
func (c *connection) observe(err error) error {
	if err != nil && refusedCredentials(err) {
		c.mu.Lock()
		c.stale = true
		c.mu.Unlock()
	}
	return err
}

func (c *connection) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.http != nil {
		c.http.CloseIdleConnections()
	}
	c.core, c.authn, c.http = nil, nil, nil
}

// serverName names the API server in errors.
func (c *connection) serverName() string {
	if u := serverURL(c.spec); u != "" {
		return u
	}
	return "this cluster's API server"
}

func serverURL(spec *provv1.KubernetesSpec) string {
	if spec.Server == nil {
		return ""
	}
	return spec.Server.URL
}

// checkServerURL accepts an https URL naming a host and nothing a client
// would send elsewhere (user information, a query, a fragment).
func checkServerURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%w: server.url must be an https:// URL of an API server, such as https://hub.example.com:6443", plugin.ErrInvalidConfig)
	}
	return nil
}

// The secretAPI calls, each bounded by callTimeout.

func (c *connection) get(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	core, _, err := c.clients(ctx)
	if err != nil {
		return nil, err
	}
	s, err := core.Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	return s, c.observe(err)
}

func (c *connection) list(ctx context.Context, namespace string, selector labels.Selector, limit int64, continueToken string) ([]corev1.Secret, string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	core, _, err := c.clients(ctx)
	if err != nil {
		return nil, "", err
	}
	list, err := core.Secrets(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String(), Limit: limit, Continue: continueToken})
	if err != nil {
		return nil, "", c.observe(err)
	}
	return list.Items, list.Continue, nil
}

func (c *connection) create(ctx context.Context, s *corev1.Secret) error {
	return c.write(ctx, s.Namespace, func(ctx context.Context, secrets corev1client.SecretInterface) error {
		_, err := secrets.Create(ctx, s, metav1.CreateOptions{})
		return err
	})
}

func (c *connection) update(ctx context.Context, s *corev1.Secret) error {
	return c.write(ctx, s.Namespace, func(ctx context.Context, secrets corev1client.SecretInterface) error {
		_, err := secrets.Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
}

func (c *connection) delete(ctx context.Context, s *corev1.Secret) error {
	return c.write(ctx, s.Namespace, func(ctx context.Context, secrets corev1client.SecretInterface) error {
		return secrets.Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID, ResourceVersion: &s.ResourceVersion}})
	})
}

func (c *connection) write(ctx context.Context, namespace string, call func(context.Context, corev1client.SecretInterface) error) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	core, _, err := c.clients(ctx)
	if err != nil {
		return err
	}
	return c.observe(call(ctx, core.Secrets(namespace)))
}

// checkAuth asks the API server who the identity is. 401 is ErrAuthFailed;
// a server without the SelfSubjectReview API (older than 1.28) or an
// identity without the right to ask (403) has been authenticated anyway.
func (c *connection) checkAuth(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, authn, err := c.clients(ctx)
	if err != nil {
		return err
	}
	_, err = authn.SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err = c.observe(err); err == nil || apiNotFound(err) {
		return nil
	}
	if err = apiError(err, "checking the credentials at "+c.serverName()); errors.Is(err, plugin.ErrOutOfScope) {
		return nil
	}
	return err
}
