package gcpauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/oauth2adapt"
	"golang.org/x/oauth2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// GCPServiceAccountAnnotation on a Kubernetes ServiceAccount names the
// Google service account its workload identity impersonates.
const GCPServiceAccountAnnotation = "iam.gke.io/gcp-service-account"

// serviceAccountTokenLifetime: the token is only presented to STS once.
const serviceAccountTokenLifetime = 10 * time.Minute

// WorkloadIdentity exchanges tokens of a Kubernetes ServiceAccount for
// Google access tokens: STS federates the token in the cluster's identity
// pool, then, if the ServiceAccount names a Google service account, IAM
// Credentials issues a token of that account.
type WorkloadIdentity struct {
	// Client requests ServiceAccount tokens; Reader reads the ServiceAccount.
	Client client.Client
	Reader client.Reader
	// Namespace and Name are the ServiceAccount's.
	Namespace, Name string
	// Audiences of the ServiceAccount token; STSAudience is the identity
	// pool and provider of the cluster.
	Audiences   []string
	STSAudience string
	Endpoints   Endpoints
	HTTP        *http.Client
}

func workloadIdentityCredentials(deps plugin.Deps, spec *provv1.GCPSecretManagerSpec, namespace string, endpoints Endpoints) *auth.Credentials {
	wi := spec.Auth.WorkloadIdentity
	project := wi.ClusterProjectID
	if project == "" {
		project = spec.ProjectID
	}
	pool := project + ".svc.id.goog"
	audiences := wi.ServiceAccountRef.Audiences
	if len(audiences) == 0 {
		audiences = []string{pool}
	}
	source := &WorkloadIdentity{
		Client: deps.Client, Reader: deps.APIReader,
		Namespace: namespace, Name: wi.ServiceAccountRef.Name,
		Audiences: audiences,
		STSAudience: fmt.Sprintf("identitynamespace:%s:https://container.googleapis.com/v1/projects/%s/locations/%s/clusters/%s",
			pool, project, wi.ClusterLocation, wi.ClusterName),
		Endpoints: endpoints,
		HTTP:      &http.Client{Timeout: callTimeout},
	}
	return auth.NewCredentials(&auth.CredentialsOptions{
		TokenProvider: classifyingProvider{oauth2adapt.TokenProviderFromTokenSource(oauth2.ReuseTokenSource(nil, source))},
	})
}

// Token implements oauth2.TokenSource. oauth2 gives it no context, so each
// call bounds itself.
func (w *WorkloadIdentity) Token() (*oauth2.Token, error) {
	gsa, err := w.googleServiceAccount()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	jwt, _, err := kit.ServiceAccountToken(ctx, w.Client, w.Namespace, w.Name, w.Audiences, serviceAccountTokenLifetime)
	if err != nil {
		return nil, err
	}
	federated, err := w.exchange(jwt)
	if err != nil || gsa == "" {
		return federated, err
	}
	return w.impersonate(federated, gsa)
}

// googleServiceAccount reads the ServiceAccount's annotation afresh, so a
// change applies at the next token.
func (w *WorkloadIdentity) googleServiceAccount() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	var sa corev1.ServiceAccount
	if err := w.Reader.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Name}, &sa); err != nil {
		if apierrors.IsNotFound(err) {
			return "", fmt.Errorf("%w: ServiceAccount %s/%s not found", plugin.ErrInvalidConfig, w.Namespace, w.Name)
		}
		return "", fmt.Errorf("reading ServiceAccount %s/%s: %w", w.Namespace, w.Name, err)
	}
	return sa.Annotations[GCPServiceAccountAnnotation], nil
}

// exchange trades the ServiceAccount token for a federated access token at STS.
func (w *WorkloadIdentity) exchange(jwt string) (*oauth2.Token, error) {
	form := url.Values{
		"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"audience":             {w.STSAudience},
		"scope":                {CloudPlatformScope},
		"requested_token_type": {"urn:ietf:params:oauth:token-type:access_token"},
		"subject_token_type":   {"urn:ietf:params:oauth:token-type:jwt"},
		"subject_token":        {jwt},
	}
	req, err := http.NewRequest(http.MethodPost, w.Endpoints.STS, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var res struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := w.call(req, "exchanging the ServiceAccount token at STS", &res); err != nil {
		return nil, err
	}
	lifetime := time.Duration(res.ExpiresIn) * time.Second
	if lifetime <= 0 {
		lifetime = serviceAccountTokenLifetime // no expiry given: assume a short one rather than forever
	}
	return &oauth2.Token{AccessToken: res.AccessToken, TokenType: "Bearer", Expiry: time.Now().Add(lifetime)}, nil
}

// impersonate asks IAM Credentials for an access token of gsa, as the
// federated identity.
func (w *WorkloadIdentity) impersonate(federated *oauth2.Token, gsa string) (*oauth2.Token, error) {
	body, _ := json.Marshal(map[string]any{"scope": []string{CloudPlatformScope}})
	endpoint := fmt.Sprintf("%s/v1/projects/-/serviceAccounts/%s:generateAccessToken", strings.TrimSuffix(w.Endpoints.IAMCredentials, "/"), url.PathEscape(gsa))
	req, err := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+federated.AccessToken)
	var res struct {
		AccessToken string    `json:"accessToken"`
		ExpireTime  time.Time `json:"expireTime"`
	}
	if err := w.call(req, "impersonating "+gsa, &res); err != nil {
		return nil, err
	}
	return &oauth2.Token{AccessToken: res.AccessToken, TokenType: "Bearer", Expiry: res.ExpireTime}, nil
}

// call sends req and decodes the JSON answer into out. A 4xx answer is a
// refusal; its error quotes Google's description, never the request.
func (w *WorkloadIdentity) call(req *http.Request, what string, out any) error {
	resp, err := w.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", what, err)
	}
	switch {
	case isRefusal(resp.StatusCode):
		return refused("%s: refused (HTTP %d)%s", what, resp.StatusCode, describe(body))
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%s: HTTP %d%s", what, resp.StatusCode, describe(body))
	}
	var token struct {
		OAuth  string `json:"access_token"`
		Google string `json:"accessToken"`
	}
	if json.Unmarshal(body, out) != nil || json.Unmarshal(body, &token) != nil || token.OAuth+token.Google == "" {
		return fmt.Errorf("%s: malformed answer (no access token)", what)
	}
	return nil
}
