// Package gcr generates registry logins for Google Container Registry and
// Artifact Registry (kind GCRAccessToken) with the GCP provider's
// credentials, compiled in with the gcp build tag.
package gcr

import (
	"context"
	"fmt"
	"strconv"

	"cloud.google.com/go/auth"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/gcp/gcpauth"
	"github.com/eso-dev/eso/providers/plugin"
)

// Kind is the configuration kind this generator serves.
const Kind = "GCRAccessToken"

// Username is the user name Google's registries expect with an access token.
const Username = "oauth2accesstoken"

// Registration wires the generator into binaries built with the gcp tag.
var Registration = Definition(gcpauth.GoogleEndpoints).Registration()

// Definition is the generator with Google's token services at endpoints
// (tests serve their own). There is no Cleanup: eso does not revoke the
// token, which expires within the hour.
func Definition(endpoints gcpauth.Endpoints) plugin.Definition[*genv1.GCRAccessToken] {
	return plugin.Definition[*genv1.GCRAccessToken]{
		Name: "gcr-access-token", Kind: Kind,
		// A service account key is parsed; no token is requested.
		CheckCredentials: func(ctx context.Context, deps plugin.Deps, cfg *genv1.GCRAccessToken, scope plugin.Scope) error {
			_, err := credentials(ctx, deps, endpoints, &cfg.Spec, scope, false)
			return err
		},
		Generate: func(ctx context.Context, deps plugin.Deps, cfg *genv1.GCRAccessToken, scope plugin.Scope) (map[string][]byte, plugin.State, error) {
			creds, err := credentials(ctx, deps, endpoints, &cfg.Spec, scope, true)
			if err != nil {
				return nil, nil, err
			}
			return login(ctx, creds)
		},
	}
}

// login is username oauth2accesstoken, password a fresh access token, and
// expiry (Unix seconds), as upstream's generator outputs them.
func login(ctx context.Context, creds *auth.Credentials) (map[string][]byte, plugin.State, error) {
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

// credentials are those spec.Auth names, or eso's own when allowed. eso's
// own are only looked for when connecting: on GCE that asks the metadata
// server.
func credentials(ctx context.Context, deps plugin.Deps, endpoints gcpauth.Endpoints, spec *genv1.GCRAccessTokenSpec,
	scope plugin.Scope, connecting bool) (*auth.Credentials, error) {
	switch {
	case spec.Auth != nil:
		return gcpauth.Credentials(ctx, deps, &provv1.GCPSecretManagerSpec{ProjectID: spec.ProjectID, Auth: spec.Auth}, scope.Namespace, endpoints)
	case !deps.AmbientCredentials:
		return nil, plugin.ErrNoAmbientCredentials
	case connecting:
		return gcpauth.Ambient()
	}
	return nil, nil
}
