// Package gcpauth builds the Google credentials of a GCP provider
// configuration: a service account key from a Secret, a ServiceAccount token
// exchanged through GKE workload identity, or eso's own (ambient) identity.
// Tokens are cached until they expire, so refreshes do not log in again.
// A refused login is an error that wraps plugin.ErrAuthFailed and reaches
// gRPC callers as Unauthenticated, so it is never mistaken for an outage.
package gcpauth

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"time"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// CloudPlatformScope is the OAuth scope of every token eso asks for.
const CloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// callTimeout bounds each HTTP call to Google's token services and each
// Kubernetes call made for a token.
const callTimeout = 30 * time.Second

// Endpoints locate Google's token services. Tests point them at their own
// servers; configurations cannot, so eso's tokens only go to Google.
type Endpoints struct {
	// STS is the Security Token Service token URL.
	STS string
	// IAMCredentials is the base URL of the IAM Service Account Credentials API.
	IAMCredentials string
}

// GoogleEndpoints are Google's production token services.
var GoogleEndpoints = Endpoints{
	STS:            "https://sts.googleapis.com/v1/token",
	IAMCredentials: "https://iamcredentials.googleapis.com",
}

// Credentials returns the credentials spec.Auth names, resolving references
// in namespace only. The first token is requested when first used.
func Credentials(ctx context.Context, deps plugin.Deps, spec *provv1.GCPSecretManagerSpec, namespace string, endpoints Endpoints) (*auth.Credentials, error) {
	switch a := spec.Auth; {
	case a != nil && a.SecretRef != nil:
		sel := a.SecretRef.SecretAccessKey
		key, err := kit.CredentialValue(ctx, deps.APIReader, namespace, sel.Name, sel.Key)
		if err != nil {
			return nil, err
		}
		creds, err := ServiceAccountKey(key)
		if err != nil {
			return nil, fmt.Errorf("credentials Secret %s/%s key %q: %w", namespace, sel.Name, sel.Key, err)
		}
		return creds, nil
	case a != nil && a.WorkloadIdentity != nil:
		return workloadIdentityCredentials(deps, spec, namespace, endpoints), nil
	default:
		return nil, fmt.Errorf("%w: auth needs secretRef or workloadIdentity", plugin.ErrInvalidConfig)
	}
}

// ServiceAccountKey returns the credentials of a service account key (JSON).
// Errors never quote the key.
func ServiceAccountKey(key []byte) (*auth.Credentials, error) {
	var fields struct {
		Type        string `json:"type"`
		ClientEmail string `json:"client_email"`
		PrivateKey  string `json:"private_key"`
	}
	if err := json.Unmarshal(key, &fields); err != nil || fields.Type != "service_account" {
		return nil, fmt.Errorf("%w: not a service account key (JSON of type service_account)", plugin.ErrInvalidConfig)
	}
	if block, _ := pem.Decode([]byte(fields.PrivateKey)); fields.ClientEmail == "" || block == nil {
		return nil, fmt.Errorf("%w: service account key without client_email or a PEM private_key", plugin.ErrInvalidConfig)
	}
	creds, err := credentials.NewCredentialsFromJSON(credentials.ServiceAccount, key, &credentials.DetectOptions{
		Scopes: []string{CloudPlatformScope},
		Client: &http.Client{Timeout: callTimeout},
	})
	if err != nil {
		return nil, fmt.Errorf("%w: unusable service account key", plugin.ErrInvalidConfig)
	}
	return classified(creds), nil
}

// Ambient returns eso's own credentials (Application Default Credentials).
func Ambient() (*auth.Credentials, error) {
	creds, err := credentials.DetectDefault(&credentials.DetectOptions{
		Scopes: []string{CloudPlatformScope},
		Client: &http.Client{Timeout: callTimeout},
	})
	if err != nil {
		return nil, fmt.Errorf("finding eso's own Google credentials: %w", err)
	}
	return classified(creds), nil
}

// classified returns creds whose token errors say whether the login was
// refused.
func classified(creds *auth.Credentials) *auth.Credentials {
	return auth.NewCredentials(&auth.CredentialsOptions{
		TokenProvider:          classifyingProvider{creds.TokenProvider},
		ProjectIDProvider:      auth.CredentialsPropertyFunc(creds.ProjectID),
		QuotaProjectIDProvider: auth.CredentialsPropertyFunc(creds.QuotaProjectID),
		UniverseDomainProvider: auth.CredentialsPropertyFunc(creds.UniverseDomain),
	})
}

type classifyingProvider struct{ auth.TokenProvider }

func (p classifyingProvider) Token(ctx context.Context) (*auth.Token, error) {
	t, err := p.TokenProvider.Token(ctx)
	if err != nil {
		return nil, classify(err)
	}
	return t, nil
}

// RefusedError is a login Google refused: the credentials are wrong, expired
// or revoked, or the identity may not be used. It wraps
// plugin.ErrAuthFailed, and gRPC calls fail with it as Unauthenticated
// instead of Unavailable, so they are not retried as an outage. The message
// is Google's description, which names identities, never tokens or keys.
type RefusedError struct{ msg string }

func (e *RefusedError) Error() string { return e.msg }

// Is makes errors.Is(err, plugin.ErrAuthFailed) hold.
func (e *RefusedError) Is(target error) bool { return target == plugin.ErrAuthFailed }

// GRPCStatus is the status gRPC reports when a call's token was refused.
func (e *RefusedError) GRPCStatus() *status.Status {
	return status.New(codes.Unauthenticated, e.msg)
}

func refused(format string, args ...any) error {
	return &RefusedError{msg: fmt.Sprintf(format, args...)}
}

// classify turns a token endpoint's 4xx answer (other than throttling)
// into a RefusedError; other errors are transient and kept.
func classify(err error) error {
	var refusal *RefusedError
	if errors.As(err, &refusal) {
		return err
	}
	var ae *auth.Error
	if errors.As(err, &ae) && ae.Response != nil && isRefusal(ae.Response.StatusCode) {
		return refused("token request refused (HTTP %d)%s", ae.Response.StatusCode, describe(ae.Body))
	}
	return err
}

func isRefusal(code int) bool {
	return code >= 400 && code < 500 && code != http.StatusTooManyRequests && code != http.StatusRequestTimeout
}

// describe extracts the error of an OAuth or Google API error body; anything
// else is left out rather than echoed.
func describe(body []byte) string {
	var oauthErr struct {
		Error       any    `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(body, &oauthErr) != nil {
		return ""
	}
	switch e := oauthErr.Error.(type) {
	case string:
		if oauthErr.Description != "" {
			return ": " + e + ": " + oauthErr.Description
		}
		return ": " + e
	case map[string]any: // Google APIs: {"error": {"code", "message", "status"}}
		if msg, ok := e["message"].(string); ok {
			return ": " + msg
		}
	}
	return ""
}
