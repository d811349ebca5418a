// Package gcr generates registry logins for Google Container Registry and
// Artifact Registry (kind GCRAccessToken) with the GCP provider's
// credentials, compiled in with the gcp build tag.
package gcr

import (
	"context"
	"fmt"
	"strconv"

	"cloud.google.com/go/auth"
	"sigs.k8s.io/controller-runtime/pkg/client"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/generators"
	"github.com/eso-dev/eso/providers"
	"github.com/eso-dev/eso/providers/gcp/gcpauth"
)

// Kind is the configuration kind this generator serves.
const Kind = "GCRAccessToken"

// Username is the user name Google's registries expect with an access token.
const Username = "oauth2accesstoken"

// Registration wires the generator into binaries built with the gcp tag.
var Registration = generators.Registration{
	Name:        "gcr-access-token",
	Kind:        Kind,
	AddToScheme: genv1.AddToScheme,
	NewConfig:   func() client.Object { return &genv1.GCRAccessToken{} },
	New: func(deps providers.Deps) generators.Generator {
		return &Generator{deps: deps, TokenEndpoints: gcpauth.GoogleEndpoints}
	},
}

// Generator generates Google registry logins.
type Generator struct {
	deps providers.Deps
	// TokenEndpoints are Google's token services, for workload identity.
	TokenEndpoints gcpauth.Endpoints
}

// Kind implements generators.Generator.
func (g *Generator) Kind() string { return Kind }

// Generate implements generators.Generator: username oauth2accesstoken,
// password a fresh access token, and expiry (Unix seconds), as upstream's
// generator outputs them. There is no state: eso does not revoke the
// token, which expires within the hour.
func (g *Generator) Generate(ctx context.Context, ref providers.Ref, scope providers.Scope) (map[string][]byte, generators.State, error) {
	spec, err := g.read(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	creds, err := g.credentials(ctx, spec, scope, true)
	if err != nil {
		return nil, nil, err
	}
	token, err := creds.Token(ctx)
	if err != nil {
		// gcpauth's errors carry Google's description, never a token or key.
		return nil, nil, fmt.Errorf("getting a Google access token: %w", err)
	}
	values := map[string][]byte{
		"username": []byte(Username),
		"password": []byte(token.Value),
	}
	if !token.Expiry.IsZero() {
		values["expiry"] = []byte(strconv.FormatInt(token.Expiry.UTC().Unix(), 10))
	}
	return values, nil, nil
}

// Cleanup implements generators.Generator: nothing is revoked.
func (g *Generator) Cleanup(context.Context, providers.Ref, providers.Scope, generators.State) error {
	return nil
}

// Validate implements generators.Generator: the configuration and its
// credential references resolve (a service account key is parsed); no
// token is requested.
func (g *Generator) Validate(ctx context.Context, ref providers.Ref, scope providers.Scope) error {
	spec, err := g.read(ctx, ref)
	if err != nil || scope.Namespace == "" {
		return err
	}
	_, err = g.credentials(ctx, spec, scope, false)
	return err
}

// credentials are those spec.Auth names, or eso's own when allowed. eso's
// own are only looked for when connecting: on GCE that asks the metadata
// server.
func (g *Generator) credentials(ctx context.Context, spec *genv1.GCRAccessTokenSpec, scope providers.Scope, connecting bool) (*auth.Credentials, error) {
	switch {
	case spec.Auth != nil:
		return gcpauth.Credentials(ctx, g.deps, &provv1.GCPSecretManagerSpec{ProjectID: spec.ProjectID, Auth: spec.Auth}, scope.Namespace, g.TokenEndpoints)
	case !g.deps.AmbientCredentials:
		return nil, providers.ErrNoAmbientCredentials
	case connecting:
		return gcpauth.Ambient()
	}
	return nil, nil
}

func (g *Generator) read(ctx context.Context, ref providers.Ref) (*genv1.GCRAccessTokenSpec, error) {
	var cfg genv1.GCRAccessToken
	if err := providers.ReadConfig(ctx, g.deps.Client, ref, &cfg); err != nil {
		return nil, err
	}
	return &cfg.Spec, nil
}
