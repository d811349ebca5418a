package gcptest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// WorkloadIdentity serves Google's STS token exchange and IAM Credentials
// generateAccessToken, the two steps of GKE workload identity. The tokens it
// issues are accepted by its Server.
type WorkloadIdentity struct {
	// STS is the token exchange URL; IAMCredentials the API's base URL.
	STS, IAMCredentials string
	server              *Server

	mu             sync.Mutex
	exchanges      []url.Values
	impersonations []string
	federated      map[string]bool
	refuse         string
	denied         map[string]bool
	issued         int
}

// StartWorkloadIdentity serves both endpoints until the test ends. From now
// on the server requires a bearer token on every call.
func (s *Server) StartWorkloadIdentity(t testing.TB) *WorkloadIdentity {
	t.Helper()
	w := &WorkloadIdentity{server: s, federated: map[string]bool{}, denied: map[string]bool{}}
	sts := httptest.NewServer(http.HandlerFunc(w.serveExchange))
	iam := httptest.NewServer(http.HandlerFunc(w.serveGenerateAccessToken))
	t.Cleanup(sts.Close)
	t.Cleanup(iam.Close)
	w.STS, w.IAMCredentials = sts.URL+"/v1/token", iam.URL
	s.RequireAuth()
	return w
}

// RefuseExchanges makes STS refuse every exchange with description; empty
// accepts them again.
func (w *WorkloadIdentity) RefuseExchanges(description string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.refuse = description
}

// Deny refuses to issue tokens of Google service account gsa.
func (w *WorkloadIdentity) Deny(gsa string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.denied[gsa] = true
}

// Exchanges returns the form of every STS request so far.
func (w *WorkloadIdentity) Exchanges() []url.Values {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.exchanges)
}

// Impersonations returns the Google service accounts tokens were issued for.
func (w *WorkloadIdentity) Impersonations() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.impersonations)
}

func (w *WorkloadIdentity) issue(prefix string) string {
	w.issued++
	return fmt.Sprintf("%s-%d", prefix, w.issued)
}

func writeJSON(rw http.ResponseWriter, code int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(code)
	_ = json.NewEncoder(rw).Encode(v)
}

func (w *WorkloadIdentity) serveExchange(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		writeJSON(rw, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	w.mu.Lock()
	defer w.mu.Unlock()
	w.exchanges = append(w.exchanges, f)
	switch {
	case f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange",
		f.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:jwt",
		f.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:access_token",
		f.Get("subject_token") == "",
		!strings.HasPrefix(f.Get("audience"), "identitynamespace:"):
		writeJSON(rw, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": "malformed token exchange"})
	case w.refuse != "":
		writeJSON(rw, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": w.refuse})
	default:
		token := w.issue("federated")
		w.federated[token] = true
		w.server.AcceptToken(token)
		writeJSON(rw, http.StatusOK, map[string]any{"access_token": token, "issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "token_type": "Bearer", "expires_in": 3600})
	}
}

func (w *WorkloadIdentity) serveGenerateAccessToken(rw http.ResponseWriter, r *http.Request) {
	gsa, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/v1/projects/-/serviceAccounts/"), ":generateAccessToken")
	var body struct {
		Scope []string `json:"scope"`
	}
	if r.Method != http.MethodPost || !ok || json.NewDecoder(r.Body).Decode(&body) != nil || len(body.Scope) == 0 {
		writeJSON(rw, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400, "message": "malformed request", "status": "INVALID_ARGUMENT"}})
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case !w.federated[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]:
		writeJSON(rw, http.StatusUnauthorized, map[string]any{"error": map[string]any{"code": 401, "message": "Request had invalid authentication credentials.", "status": "UNAUTHENTICATED"}})
	case w.denied[gsa]:
		writeJSON(rw, http.StatusForbidden, map[string]any{"error": map[string]any{"code": 403,
			"message": fmt.Sprintf("Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist): %s", gsa), "status": "PERMISSION_DENIED"}})
	default:
		w.impersonations = append(w.impersonations, gsa)
		token := w.issue("gsa")
		w.server.AcceptToken(token)
		writeJSON(rw, http.StatusOK, map[string]any{"accessToken": token, "expireTime": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	}
}
