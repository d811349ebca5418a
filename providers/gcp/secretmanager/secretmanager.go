// Package secretmanager is the provider for Google Cloud Secret Manager
// (kind GCPSecretManager), compiled in with the gcp build tag.
package secretmanager

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/auth"
	sm "cloud.google.com/go/secretmanager/apiv1"
	smpb "cloud.google.com/go/secretmanager/apiv1/secretmanagerpb"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/gcp/gcpauth"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/googleapis/gax-go/v2"
)

// Kind is the configuration kind this provider serves.
const Kind = "GCPSecretManager"

// Registration describes the provider to the registry.
var Registration = Definition(gcpauth.GoogleEndpoints).Registration()

// New returns the provider; extra options are added to every client (tests
// use them to reach an in-process server without TLS or credentials).
func New(deps plugin.Deps, extra ...option.ClientOption) plugin.Provider {
	return Definition(gcpauth.GoogleEndpoints, extra...).Registration().NewProvider(deps)
}

// Definition is the provider with Google's token services at endpoints
// (for workload identity; tests serve their own) and extra options added
// to every client.
func Definition(endpoints gcpauth.Endpoints, extra ...option.ClientOption) plugin.Definition[*provv1.GCPSecretManager] {
	c := connector{endpoints: endpoints, extra: extra}
	return plugin.Definition[*provv1.GCPSecretManager]{
		Name: "gcp-secretmanager", Kind: Kind,
		CheckCredentials: func(ctx context.Context, deps plugin.Deps, cfg *provv1.GCPSecretManager, scope plugin.Scope) error {
			_, _, err := c.options(ctx, deps, &cfg.Spec, scope, false)
			return err
		},
		NewClient: c.connect,
	}
}

// connector builds clients: where Google's token services are, and options
// for every client.
type connector struct {
	endpoints gcpauth.Endpoints
	extra     []option.ClientOption
}

// connect builds a client. The gRPC connection and its credentials live as
// long as the client: core reuses it while the store is unchanged and
// closes it when replaced.
func (c connector) connect(ctx context.Context, deps plugin.Deps, cfg *provv1.GCPSecretManager, scope plugin.Scope) (plugin.SecretsClient, error) {
	opts, creds, err := c.options(ctx, deps, &cfg.Spec, scope, true)
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
	cl := &Client{api: api, parent: parent, regional: cfg.Spec.Location != "", creds: creds}
	cl.JSONValues = kit.JSONValues{Value: cl.value, Metadata: cl.labels}
	return cl, nil
}

// options returns the client options of spec and the credentials they
// carry (nil for tests without credentials). eso's own credentials are only
// looked for when connecting: on GCE that asks the metadata server.
func (c connector) options(ctx context.Context, deps plugin.Deps, spec *provv1.GCPSecretManagerSpec, scope plugin.Scope, connecting bool) ([]option.ClientOption, *auth.Credentials, error) {
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
		creds, err = gcpauth.Credentials(ctx, deps, spec, scope.Namespace, c.endpoints)
	case len(c.extra) > 0:
		// tests: the in-process server needs no credentials
	case !deps.AmbientCredentials:
		return nil, nil, plugin.ErrNoAmbientCredentials
	case spec.Endpoint != "":
		// eso's bearer token would go to an endpoint the configuration chose.
		return nil, nil, fmt.Errorf("%w: endpoint cannot be combined with eso's own credentials", plugin.ErrInvalidConfig)
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
	opts = append(opts, option.WithGRPCDialOption(grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(plugin.MaxResponseBytes))))
	return append(opts, c.extra...), creds, nil
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
	// JSONValues serves GetSecret and GetSecretMap from value and labels.
	kit.JSONValues
	api      *sm.Client
	parent   string
	regional bool
	// creds are the client's credentials, nil for tests without any.
	creds *auth.Credentials
}

// CheckAuth implements plugin.AuthChecker: it obtains an access token,
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

// GetAllSecrets implements plugin.SecretsClient: secrets whose labels
// carry all tags (filtered by the server) and whose name matches, each at its
// latest version. Secret names are flat: a path is not supported.
func (c *Client) GetAllSecrets(ctx context.Context, find esv1.ExternalSecretFind) (map[string][]byte, error) {
	if find.Path != nil {
		return nil, fmt.Errorf("%w: Secret Manager names have no path (find.path)", plugin.ErrNotSupported)
	}
	re, err := kit.NameRegexp(find)
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
	var budget kit.FindBudget
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
		if !kit.HasTags(s.Labels, find.Tags) || (re != nil && !re.MatchString(name)) {
			continue
		}
		// No enabled version (or deleted since the list): not part of the result.
		if err := kit.ReadFound(ctx, out, name, c.value, &budget); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// listPageSize is how many secrets one ListSecrets page asks for.
const listPageSize = 100

// value reads a version (default "latest") of a secret.
func (c *Client) value(ctx context.Context, key, version string) ([]byte, error) {
	if version == "" {
		version = "latest"
	}
	res, err := c.api.AccessSecretVersion(ctx, &smpb.AccessSecretVersionRequest{Name: fmt.Sprintf("%s/versions/%s", c.secretName(key), version)})
	if status.Code(err) == codes.FailedPrecondition {
		return nil, fmt.Errorf("%w: secret %q version %q is disabled or destroyed", plugin.ErrSecretNotFound, key, version)
	}
	if err != nil {
		return nil, apiError(err, fmt.Sprintf("reading secret %q version %q", key, version))
	}
	return res.GetPayload().GetData(), nil
}

// labels are a secret's labels, for metadataPolicy Fetch.
func (c *Client) labels(ctx context.Context, key string) (map[string]string, error) {
	s, err := c.api.GetSecret(ctx, &smpb.GetSecretRequest{Name: c.secretName(key)})
	if err != nil {
		return nil, apiError(err, fmt.Sprintf("reading secret %q", key))
	}
	return s.GetLabels(), nil
}

// apiError turns gRPC codes into the provider contract's errors; what says
// which call failed on which secret. Status messages of Secret Manager name
// resources, never payloads.
func apiError(err error, what string) error {
	msg := status.Convert(err).Message()
	switch status.Code(err) {
	case codes.NotFound:
		return fmt.Errorf("%w: %s: %s", plugin.ErrSecretNotFound, what, msg)
	case codes.Unauthenticated:
		return fmt.Errorf("%w: %s: %s", plugin.ErrAuthFailed, what, msg)
	case codes.PermissionDenied:
		return fmt.Errorf("%w: %s: %s", plugin.ErrOutOfScope, what, msg)
	default:
		if tooLarge := kit.TooLargeMessage(err, plugin.MaxResponseBytes); tooLarge != nil {
			return fmt.Errorf("%s: %w", what, tooLarge)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
}

// Capabilities implements plugin.SecretsClient.
func (c *Client) Capabilities() plugin.Capabilities { return plugin.ReadWrite }

// Close implements plugin.SecretsClient: it closes the gRPC connection.
func (c *Client) Close(context.Context) error { return c.api.Close() }
