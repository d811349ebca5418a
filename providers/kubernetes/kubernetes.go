// Package kubernetes is a provider that reads and writes the Secrets of a
// namespace of a Kubernetes cluster (kind Kubernetes): the cluster eso runs
// in, or another one (server.url) as the identity auth names. It needs no SDK
// beyond client-go and is always compiled in.
package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// Kind is the configuration kind this provider serves.
const Kind = "Kubernetes"

// Registration describes the provider to the registry. Deps.Client reads
// configurations and requests ServiceAccount tokens, Deps.APIReader reads
// Secrets as eso itself and the credentials auth and caProvider name.
var Registration = plugin.Definition[*provv1.Kubernetes]{
	Name: "kubernetes", Kind: Kind,
	Check:            func(cfg *provv1.Kubernetes) error { return checkSpec(&cfg.Spec) },
	CheckCredentials: checkCredentials,
	NewClient:        connect,
}.Registration()

// checkCredentials resolves what the configuration references in the
// scope's credentials namespace, without calling the API server read.
func checkCredentials(ctx context.Context, deps plugin.Deps, cfg *provv1.Kubernetes, scope plugin.Scope) error {
	if _, err := remoteNamespace(cfg, scope); err != nil {
		return err
	}
	if cfg.Spec.Auth == nil {
		return nil
	}
	return newConnection(deps, &cfg.Spec, scope.Namespace).checkCredentials(ctx)
}

func connect(_ context.Context, deps plugin.Deps, cfg *provv1.Kubernetes, scope plugin.Scope) (plugin.SecretsClient, error) {
	if err := checkSpec(&cfg.Spec); err != nil {
		return nil, err
	}
	namespace, err := remoteNamespace(cfg, scope)
	if err != nil {
		return nil, err
	}
	if cfg.Spec.Auth == nil {
		return &Client{namespace: namespace, api: ownIdentity{reader: deps.APIReader, writer: deps.Client}}, nil
	}
	return &Client{namespace: namespace, api: newConnection(deps, &cfg.Spec, scope.Namespace)}, nil
}

// checkSpec refuses what the schema refuses too, for configurations that
// did not pass through it (a v1 store's translated block, a provider
// process's request).
func checkSpec(spec *provv1.KubernetesSpec) error {
	if a := spec.Auth; a != nil && countSet(a.Token != nil, a.Cert != nil, a.ServiceAccount != nil) != 1 {
		return fmt.Errorf("%w: auth needs exactly one of token, cert or serviceAccount", plugin.ErrInvalidConfig)
	}
	srv := spec.Server
	if srv == nil {
		return nil
	}
	switch {
	case srv.URL == "" && (len(srv.CABundle) > 0 || srv.CAProvider != nil):
		return fmt.Errorf("%w: server.caBundle and server.caProvider need server.url: this cluster's CA is eso's own", plugin.ErrInvalidConfig)
	case srv.URL == "":
		return nil
	case spec.Auth == nil:
		return fmt.Errorf("%w: server.url needs auth: eso never presents its own identity to another API server", plugin.ErrInvalidConfig)
	}
	return checkServerURL(srv.URL)
}

func countSet(set ...bool) int {
	n := 0
	for _, b := range set {
		if b {
			n++
		}
	}
	return n
}

// remoteNamespace is the namespace the client reads, after the scope check:
// eso's own identity may read only the credentials namespace, whatever kind of
// store is asking, because the configuration is a namespaced object its
// namespace's users may edit. With auth the identity's RBAC decides, as the
// API server enforces it.
func remoteNamespace(cfg *provv1.Kubernetes, scope plugin.Scope) (string, error) {
	ns := cfg.Spec.RemoteNamespace
	if ns == "" {
		ns = scope.Namespace
	}
	if cfg.Spec.Auth == nil && ns != scope.Namespace {
		return "", fmt.Errorf("%w: eso's own identity may only read namespace %q, not %q; set auth to read another namespace with that identity's permissions",
			plugin.ErrOutOfScope, scope.Namespace, ns)
	}
	return ns, nil
}

// secretAPI reads and writes Secrets as one identity: eso's own
// (ownIdentity) or the one a configuration's auth names (connection).
// Errors are the API's; the Client maps them to the contract's.
type secretAPI interface {
	get(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// list returns one page of at most limit Secrets from continueToken
	// on, and the token of the next page ("" after the last).
	list(ctx context.Context, namespace string, selector labels.Selector, limit int64, continueToken string) ([]corev1.Secret, string, error)
	create(ctx context.Context, s *corev1.Secret) error
	update(ctx context.Context, s *corev1.Secret) error
	// delete removes s only if it is still the object read (UID and
	// resourceVersion preconditions).
	delete(ctx context.Context, s *corev1.Secret) error
}

// listPageSize is how many Secrets a find holds at once: a namespace's
// Secrets are read page by page, never all in one answer.
const listPageSize = 100

// Client reads and writes the Secrets of one namespace.
type Client struct {
	namespace string
	api       secretAPI
}

// GetSecret implements plugin.SecretsClient: the key names a Secret, the
// property one of its keys; without a property the whole Secret is returned as
// a JSON object of its keys. With metadataPolicy Fetch it reads the Secret's
// metadata instead: {"labels": {...}, "annotations": {...}}, where a property
// may be a path such as "labels.team".
func (c *Client) GetSecret(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	if ref.MetadataPolicy == esv1.MetadataPolicyFetch {
		doc, err := c.metadata(ctx, ref)
		if err != nil || ref.Property == "" {
			return doc, err
		}
		return kit.Property(doc, ref.Property)
	}
	data, err := c.secretData(ctx, ref)
	if err != nil {
		return nil, err
	}
	if ref.Property == "" {
		return dataJSON(data)
	}
	if v, ok := data[ref.Property]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("%w: Secret %s/%s has no key %q", plugin.ErrPropertyNotFound, c.namespace, ref.Key, ref.Property)
}

// GetSecretMap implements plugin.SecretsClient: the Secret's keys, or the
// fields of one key holding a JSON object when a property is given. With
// metadataPolicy Fetch: the fields of the metadata document or of its property.
func (c *Client) GetSecretMap(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) (map[string][]byte, error) {
	if ref.MetadataPolicy == esv1.MetadataPolicyFetch {
		doc, err := c.GetSecret(ctx, ref)
		if err != nil {
			return nil, err
		}
		return kit.FieldMap(doc)
	}
	data, err := c.secretData(ctx, ref)
	if err != nil {
		return nil, err
	}
	if ref.Property == "" {
		return data, nil
	}
	v, ok := data[ref.Property]
	if !ok {
		return nil, fmt.Errorf("%w: Secret %s/%s has no key %q", plugin.ErrPropertyNotFound, c.namespace, ref.Key, ref.Property)
	}
	fields, err := kit.FieldMap(v)
	if err != nil {
		return nil, fmt.Errorf("Secret %s/%s key %q: %w", c.namespace, ref.Key, ref.Property, err)
	}
	return fields, nil
}

func (c *Client) secretData(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) (map[string][]byte, error) {
	if ref.Version != "" {
		return nil, fmt.Errorf("%w: Kubernetes Secrets have no versions (Secret %s/%s, version %q)", plugin.ErrSecretNotFound, c.namespace, ref.Key, ref.Version)
	}
	s, err := c.read(ctx, ref.Key)
	if err != nil {
		return nil, err
	}
	return s.Data, nil
}

// metadata returns a Secret's labels and annotations as one JSON document.
func (c *Client) metadata(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	s, err := c.read(ctx, ref.Key)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]map[string]string{"labels": orEmpty(s.Labels), "annotations": orEmpty(s.Annotations)})
}

// read gets a Secret of the client's namespace, mapping API errors to the
// provider contract's.
func (c *Client) read(ctx context.Context, name string) (*corev1.Secret, error) {
	s, err := c.api.get(ctx, c.namespace, name)
	switch {
	case apiNotFound(err):
		return nil, fmt.Errorf("%w: Secret %s/%s", plugin.ErrSecretNotFound, c.namespace, name)
	case err != nil:
		return nil, apiError(err, fmt.Sprintf("reading Secret %s/%s", c.namespace, name))
	}
	return s, nil
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// GetAllSecrets implements plugin.SecretsClient: the Secrets of the
// namespace whose labels carry all find.tags and whose name matches
// find.name, each as a JSON object of its keys. Secrets have no path. The
// namespace is its tenant's to fill, so Secrets are listed a page at a time
// and the find stops at the kit.FindBudget bounds.
func (c *Client) GetAllSecrets(ctx context.Context, find esv1.ExternalSecretFind) (map[string][]byte, error) {
	if find.Path != nil {
		return nil, fmt.Errorf("%w: Kubernetes Secrets have no path (find.path)", plugin.ErrNotSupported)
	}
	match, err := kit.NameMatcher(find)
	if err != nil {
		return nil, err
	}
	selector := labels.SelectorFromSet(find.Tags)
	var budget kit.FindBudget
	out := map[string][]byte{}
	for token := ""; ; {
		page, next, err := c.listPage(ctx, selector, token)
		if err != nil {
			return nil, err
		}
		if err := budget.Listed(len(page)); err != nil {
			return nil, fmt.Errorf("find in namespace %s: %w", c.namespace, err)
		}
		for _, s := range page {
			if !match(s.Name) {
				continue
			}
			v, err := dataJSON(s.Data)
			if err != nil {
				return nil, err
			}
			if err := budget.Result(v); err != nil {
				return nil, fmt.Errorf("find in namespace %s: %w", c.namespace, err)
			}
			out[s.Name] = v
		}
		if next == "" {
			return out, nil
		}
		token = next
	}
}

// listPage lists the page from token on. Another cluster's answers are
// bounded in bytes (plugin.MaxResponseBytes), so a page over the bound is
// asked again at half the size: large Secrets are listed fewer at a time,
// and only one Secret over the bound fails the find.
func (c *Client) listPage(ctx context.Context, selector labels.Selector, token string) ([]corev1.Secret, string, error) {
	for limit := int64(listPageSize); ; limit /= 2 {
		page, next, err := c.api.list(ctx, c.namespace, selector, limit, token)
		switch {
		case err == nil:
			return page, next, nil
		case errors.Is(err, plugin.ErrTooLarge) && limit > 1:
			continue
		default:
			return nil, "", apiError(err, "listing Secrets of "+c.namespace)
		}
	}
}

// Capabilities implements plugin.SecretsClient: it writes too (write.go).
func (c *Client) Capabilities() plugin.Capabilities { return plugin.ReadWrite }

// Close implements plugin.SecretsClient: a connection's idle connections
// to its API server are closed.
func (c *Client) Close(context.Context) error {
	if conn, ok := c.api.(*connection); ok {
		conn.close()
	}
	return nil
}

// CheckAuth implements plugin.AuthChecker: the API server is asked who
// the configured identity is (SelfSubjectReview), which reads no Secret.
// eso's own identity is established already.
func (c *Client) CheckAuth(ctx context.Context) error {
	conn, ok := c.api.(*connection)
	if !ok {
		return nil
	}
	return conn.checkAuth(ctx)
}

// dataJSON is a whole Secret as one value: a JSON object of its keys.
func dataJSON(data map[string][]byte) ([]byte, error) {
	asStrings := make(map[string]string, len(data))
	for k, v := range data {
		asStrings[k] = string(v)
	}
	return json.Marshal(asStrings)
}
