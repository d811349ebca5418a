// Package secretmanager is the provider for Google Cloud Secret Manager
// (kind GCPSecretManager), compiled in with the gcp build tag.
package secretmanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/auth"
	sm "cloud.google.com/go/secretmanager/apiv1"
	smpb "cloud.google.com/go/secretmanager/apiv1/secretmanagerpb"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers"
	"github.com/eso-dev/eso/providers/gcp/gcpauth"
)

// Kind is the configuration kind this provider serves.
const Kind = "GCPSecretManager"

// Registration describes the provider to the registry.
var Registration = providers.Registration{
	Name:        "gcp-secretmanager",
	Kind:        Kind,
	AddToScheme: provv1.AddToScheme,
	NewConfig:   func() client.Object { return &provv1.GCPSecretManager{} },
	New:         func(d providers.Deps) providers.Provider { return New(d) },
}

// Provider serves GCPSecretManager configurations.
type Provider struct {
	deps providers.Deps
	// TokenEndpoints are Google's token services, for workload identity.
	// Tests point them at their own servers before the first NewClient.
	TokenEndpoints gcpauth.Endpoints
	// extraOptions are added to every client; tests use them to reach an
	// in-process server without TLS.
	extraOptions []option.ClientOption
}

// New returns the provider.
func New(deps providers.Deps, extra ...option.ClientOption) *Provider {
	return &Provider{deps: deps, TokenEndpoints: gcpauth.GoogleEndpoints, extraOptions: extra}
}

// Kind implements providers.Provider.
func (p *Provider) Kind() string { return Kind }

// Validate implements providers.Provider without calling Google.
func (p *Provider) Validate(ctx context.Context, ref providers.Ref, scope providers.Scope) error {
	var cfg provv1.GCPSecretManager
	if err := providers.ReadConfig(ctx, p.deps.Client, ref, &cfg); err != nil {
		return err
	}
	if scope.Namespace == "" {
		return nil
	}
	_, _, err := p.options(ctx, &cfg.Spec, scope, false)
	return err
}

// NewClient implements providers.Provider. The gRPC connection and its
// credentials live as long as the client: core reuses it while the store is
// unchanged and closes it when replaced.
func (p *Provider) NewClient(ctx context.Context, ref providers.Ref, scope providers.Scope) (providers.SecretsClient, error) {
	var cfg provv1.GCPSecretManager
	if err := providers.ReadConfig(ctx, p.deps.Client, ref, &cfg); err != nil {
		return nil, err
	}
	opts, creds, err := p.options(ctx, &cfg.Spec, scope, true)
	if err != nil {
		return nil, err
	}
	api, err := sm.NewClient(context.WithoutCancel(ctx), opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to Secret Manager: %w", err)
	}
	setCallOptions(api.CallOptions)
	parent := "projects/" + cfg.Spec.ProjectID
	if cfg.Spec.Location != "" {
		parent += "/locations/" + cfg.Spec.Location
	}
	return &Client{api: api, parent: parent, regional: cfg.Spec.Location != "", creds: creds}, nil
}

// options returns the client options of spec and the credentials they
// carry (nil for tests without credentials). eso's own credentials are only
// looked for when connecting: on GCE that asks the metadata server.
func (p *Provider) options(ctx context.Context, spec *provv1.GCPSecretManagerSpec, scope providers.Scope, connecting bool) ([]option.ClientOption, *auth.Credentials, error) {
	var opts []option.ClientOption
	switch {
	case spec.Endpoint != "":
		opts = append(opts, option.WithEndpoint(spec.Endpoint))
	case spec.Location != "":
		opts = append(opts, option.WithEndpoint(fmt.Sprintf("secretmanager.%s.rep.googleapis.com:443", spec.Location)))
	}
	var creds *auth.Credentials
	var err error
	switch {
	case spec.Auth != nil:
		creds, err = gcpauth.Credentials(ctx, p.deps, spec, scope.Namespace, p.TokenEndpoints)
	case len(p.extraOptions) > 0:
		// tests: the in-process server needs no credentials
	case !p.deps.AmbientCredentials:
		return nil, nil, providers.ErrNoAmbientCredentials
	case spec.Endpoint != "":
		// eso's bearer token would go to an endpoint the configuration chose.
		return nil, nil, fmt.Errorf("%w: endpoint cannot be combined with eso's own credentials", providers.ErrInvalidConfig)
	case connecting:
		creds, err = gcpauth.Ambient()
	}
	if err != nil {
		return nil, nil, err
	}
	if creds != nil {
		opts = append(opts, option.WithAuthCredentials(creds))
	}
	// The library lets a message be 2 GiB; endpoint may name a tenant's
	// server. Applied after the library's own default, so this one holds.
	opts = append(opts, option.WithGRPCDialOption(grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(providers.MaxResponseBytes))))
	return append(opts, p.extraOptions...), creds, nil
}

// readRetries is how often a read is retried when the connection failed
// (Unavailable). The library would retry reads for a minute, also on
// ResourceExhausted; longer outages go back to core instead, which backs off
// per ExternalSecret and reports the error in its status.
const readRetries = 2

func setCallOptions(o *sm.CallOptions) {
	read := []gax.CallOption{
		gax.WithTimeout(30 * time.Second),
		gax.WithRetry(func() gax.Retryer { return &unavailableRetryer{} }),
	}
	o.AccessSecretVersion, o.GetSecret, o.ListSecrets, o.ListSecretVersions = read, read, read, read
}

type unavailableRetryer struct{ attempts int }

func (r *unavailableRetryer) Retry(err error) (time.Duration, bool) {
	if status.Code(err) != codes.Unavailable || r.attempts >= readRetries {
		return 0, false
	}
	r.attempts++
	return time.Duration(r.attempts) * 200 * time.Millisecond, true
}

// Client reads and writes the secrets of one project (and location).
type Client struct {
	api      *sm.Client
	parent   string
	regional bool
	// creds are the client's credentials, nil for tests without any.
	creds *auth.Credentials
}

// CheckAuth implements providers.AuthChecker: it obtains an access token,
// which is where a wrong or revoked key or a refused exchange shows. The
// token is the one the client's calls use, so the check costs no login.
func (c *Client) CheckAuth(ctx context.Context) error {
	if c.creds == nil {
		return nil
	}
	if _, err := c.creds.Token(ctx); err != nil {
		return fmt.Errorf("obtaining a Google access token: %w", err)
	}
	return nil
}

func (c *Client) secretName(key string) string { return c.parent + "/secrets/" + key }

// GetSecret implements providers.SecretsClient: the version (default
// "latest") of a secret, a JSON property of it, or with metadataPolicy Fetch
// the secret's labels as a JSON object.
func (c *Client) GetSecret(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	var value []byte
	var err error
	if ref.MetadataPolicy == esv1.MetadataPolicyFetch {
		value, err = c.labels(ctx, ref.Key)
	} else {
		value, err = c.value(ctx, ref.Key, ref.Version)
	}
	if err != nil || ref.Property == "" {
		return value, err
	}
	return providers.Property(value, ref.Property)
}

// GetSecretMap implements providers.SecretsClient.
func (c *Client) GetSecretMap(ctx context.Context, ref esv1.ExternalSecretDataRemoteRef) (map[string][]byte, error) {
	value, err := c.GetSecret(ctx, ref)
	return providers.FieldsOf(value, err, ref.Key)
}

// GetAllSecrets implements providers.SecretsClient: secrets whose labels
// carry all tags (filtered by the server) and whose name matches, each at its
// latest version. Secret names are flat: a path is not supported.
func (c *Client) GetAllSecrets(ctx context.Context, find esv1.ExternalSecretFind) (map[string][]byte, error) {
	if find.Path != nil {
		return nil, fmt.Errorf("%w: Secret Manager names have no path (find.path)", providers.ErrNotSupported)
	}
	re, err := providers.NameRegexp(find)
	if err != nil {
		return nil, err
	}
	var filters []string
	for _, k := range slices.Sorted(maps.Keys(find.Tags)) {
		filters = append(filters, fmt.Sprintf("labels.%s=%s", k, find.Tags[k]))
	}
	// Pages stay far below the message bound: a page of the server's
	// default size (up to 25,000 secrets) would not.
	it := c.api.ListSecrets(ctx, &smpb.ListSecretsRequest{Parent: c.parent, Filter: strings.Join(filters, " AND "), PageSize: listPageSize})
	var budget providers.FindBudget
	out := map[string][]byte{}
	for {
		s, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			return nil, apiError(err, "listing secrets")
		}
		if err := budget.Listed(1); err != nil {
			return nil, fmt.Errorf("find: %w", err)
		}
		name := s.Name[strings.LastIndex(s.Name, "/")+1:]
		if !providers.HasTags(s.Labels, find.Tags) || (re != nil && !re.MatchString(name)) {
			continue
		}
		v, err := c.value(ctx, name, "")
		if errors.Is(err, providers.ErrSecretNotFound) {
			continue // no enabled version (or deleted since the list): not part of the result
		}
		if err != nil {
			return nil, err
		}
		if err := budget.Result(v); err != nil {
			return nil, fmt.Errorf("find: %w", err)
		}
		out[name] = v
	}
	return out, nil
}

// listPageSize is how many secrets one ListSecrets page asks for.
const listPageSize = 100

func (c *Client) value(ctx context.Context, key, version string) ([]byte, error) {
	if version == "" {
		version = "latest"
	}
	res, err := c.api.AccessSecretVersion(ctx, &smpb.AccessSecretVersionRequest{Name: fmt.Sprintf("%s/versions/%s", c.secretName(key), version)})
	if status.Code(err) == codes.FailedPrecondition {
		return nil, fmt.Errorf("%w: secret %q version %q is disabled or destroyed", providers.ErrSecretNotFound, key, version)
	}
	if err != nil {
		return nil, apiError(err, fmt.Sprintf("reading secret %q version %q", key, version))
	}
	return res.GetPayload().GetData(), nil
}

func (c *Client) labels(ctx context.Context, key string) ([]byte, error) {
	s, err := c.api.GetSecret(ctx, &smpb.GetSecretRequest{Name: c.secretName(key)})
	if err != nil {
		return nil, apiError(err, fmt.Sprintf("reading secret %q", key))
	}
	labels := s.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	return json.Marshal(labels)
}

// apiError turns gRPC codes into the provider contract's errors; what says
// which call failed on which secret. Status messages of Secret Manager name
// resources, never payloads.
func apiError(err error, what string) error {
	msg := status.Convert(err).Message()
	switch status.Code(err) {
	case codes.NotFound:
		return fmt.Errorf("%w: %s: %s", providers.ErrSecretNotFound, what, msg)
	case codes.Unauthenticated:
		return fmt.Errorf("%w: %s: %s", providers.ErrAuthFailed, what, msg)
	case codes.PermissionDenied:
		return fmt.Errorf("%w: %s: %s", providers.ErrOutOfScope, what, msg)
	default:
		if tooLarge := providers.TooLargeMessage(err, providers.MaxResponseBytes); tooLarge != nil {
			return fmt.Errorf("%s: %w", what, tooLarge)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
}

// PropertiesAreJSONPaths implements providers.JSONProperties.
func (c *Client) PropertiesAreJSONPaths() {}

// Capabilities implements providers.SecretsClient.
func (c *Client) Capabilities() providers.Capabilities { return providers.ReadWrite }

// Close implements providers.SecretsClient: it closes the gRPC connection.
func (c *Client) Close(context.Context) error { return c.api.Close() }
