// Package kubernetes is a provider that reads Secrets of a namespace of the
// cluster eso runs in (kind Kubernetes). It needs no SDK beyond client-go and is
// always compiled in.
package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// Kind is the configuration kind this provider serves.
const Kind = "Kubernetes"

// Registration describes the provider to the registry. Deps.Client reads
// configurations and requests ServiceAccount tokens, Deps.APIReader reads
// Secrets as eso itself.
var Registration = plugin.Definition[*provv1.Kubernetes]{
	Name: "kubernetes", Kind: Kind,
	Check: func(cfg *provv1.Kubernetes) error {
		if cfg.Spec.Auth != nil && cfg.Spec.Auth.ServiceAccount == nil {
			return fmt.Errorf("%w: auth needs serviceAccount", plugin.ErrInvalidConfig)
		}
		return nil
	},
	CheckCredentials: func(_ context.Context, _ plugin.Deps, cfg *provv1.Kubernetes, scope plugin.Scope) error {
		_, err := remoteNamespace(cfg, scope)
		return err
	},
	NewClient: connect,
}.Registration()

func connect(_ context.Context, deps plugin.Deps, cfg *provv1.Kubernetes, scope plugin.Scope) (plugin.SecretsClient, error) {
	namespace, err := remoteNamespace(cfg, scope)
	if err != nil {
		return nil, err
	}
	if cfg.Spec.Auth == nil {
		return &Client{namespace: namespace, get: readerGetter(deps.APIReader), list: readerLister(deps.APIReader),
			write: clientWriter{deps.Client}}, nil
	}
	sa := cfg.Spec.Auth.ServiceAccount
	tokens := newServiceAccountReader(deps, scope.Namespace, sa.Name, sa.Audiences)
	return &Client{namespace: namespace, get: tokens.getSecret, list: tokens.listSecrets, write: serviceAccountWriter{tokens}}, nil
}

// remoteNamespace is the namespace the client reads, after the scope check:
// eso's own identity may read only the credentials namespace, whatever kind of
// store is asking, because the configuration is a namespaced object its
// namespace's users may edit. With a ServiceAccount the account's RBAC decides,
// as the API server enforces it.
func remoteNamespace(cfg *provv1.Kubernetes, scope plugin.Scope) (string, error) {
	ns := cfg.Spec.RemoteNamespace
	if ns == "" {
		ns = scope.Namespace
	}
	if cfg.Spec.Auth == nil && ns != scope.Namespace {
		return "", fmt.Errorf("%w: eso's own identity may only read namespace %q, not %q; set auth.serviceAccount to read another namespace with that account's permissions",
			plugin.ErrOutOfScope, scope.Namespace, ns)
	}
	return ns, nil
}

type (
	secretGetter func(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// secretLister lists one page of at most listPageSize Secrets from
	// continueToken on, and the token of the next page ("" after the last).
	secretLister func(ctx context.Context, namespace string, selector labels.Selector, continueToken string) ([]corev1.Secret, string, error)
)

// listPageSize is how many Secrets a find holds at once: a namespace's
// Secrets are read page by page, never all in one answer.
const listPageSize = 100

func readerGetter(r client.Reader) secretGetter {
	return func(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
		var s corev1.Secret
		err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s)
		return &s, err
	}
}

func readerLister(r client.Reader) secretLister {
	return func(ctx context.Context, namespace string, selector labels.Selector, continueToken string) ([]corev1.Secret, string, error) {
		var list corev1.SecretList
		err := r.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: selector},
			client.Limit(listPageSize), client.Continue(continueToken))
		return list.Items, list.Continue, err
	}
}

// Client reads and writes the Secrets of one namespace.
type Client struct {
	namespace string
	get       secretGetter
	list      secretLister
	write     secretWriter
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
	s, err := c.get(ctx, c.namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("%w: Secret %s/%s", plugin.ErrSecretNotFound, c.namespace, name)
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("%w: reading Secret %s/%s is forbidden for this identity", plugin.ErrOutOfScope, c.namespace, name)
	case err != nil:
		return nil, fmt.Errorf("reading Secret %s/%s: %w", c.namespace, name, err)
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
		page, next, err := c.list(ctx, c.namespace, selector, token)
		switch {
		case apierrors.IsForbidden(err):
			return nil, fmt.Errorf("%w: listing Secrets of %s is forbidden for this identity", plugin.ErrOutOfScope, c.namespace)
		case err != nil:
			return nil, fmt.Errorf("listing Secrets of %s: %w", c.namespace, err)
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

// Capabilities implements plugin.SecretsClient: it writes too (write.go).
func (c *Client) Capabilities() plugin.Capabilities { return plugin.ReadWrite }

// Close implements plugin.SecretsClient.
func (c *Client) Close(context.Context) error { return nil }

// dataJSON is a whole Secret as one value: a JSON object of its keys.
func dataJSON(data map[string][]byte) ([]byte, error) {
	asStrings := make(map[string]string, len(data))
	for k, v := range data {
		asStrings[k] = string(v)
	}
	return json.Marshal(asStrings)
}
