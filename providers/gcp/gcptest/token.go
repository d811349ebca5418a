package gcptest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TokenEndpoint is Google's OAuth 2.0 token endpoint for service account
// keys (the JWT bearer grant): it verifies the assertion a key signed and
// issues access tokens its Server accepts.
type TokenEndpoint struct {
	// URL is the token_uri of the keys the endpoint issued.
	URL    string
	server *Server

	mu     sync.Mutex
	keys   map[string]*rsa.PublicKey // by client_email
	issued int
}

// StartTokenEndpoint serves a token endpoint until the test ends. From now
// on the server requires a bearer token on every call.
func (s *Server) StartTokenEndpoint(t testing.TB) *TokenEndpoint {
	t.Helper()
	e := &TokenEndpoint{server: s, keys: map[string]*rsa.PublicKey{}}
	hs := httptest.NewServer(http.HandlerFunc(e.serveToken))
	t.Cleanup(hs.Close)
	e.URL = hs.URL + "/token"
	s.RequireAuth()
	return e
}

// RequireAuth makes the server refuse calls without an accepted bearer token.
func (s *Server) RequireAuth() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requireAuth = true
}

// Key returns a new service account key (the JSON a Secret holds) of email,
// which the endpoint accepts until Revoke.
func (e *TokenEndpoint) Key(t testing.TB, email string) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	e.keys[email] = &key.PublicKey
	e.mu.Unlock()
	out, _ := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     "p",
		"private_key_id": "key-" + email,
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   email,
		"client_id":      "1",
		"token_uri":      e.URL,
	})
	return out
}

// Revoke refuses the keys of email from now on; tokens already issued stay valid.
func (e *TokenEndpoint) Revoke(email string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.keys, email)
}

// Issued returns how many access tokens the endpoint issued.
func (e *TokenEndpoint) Issued() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.issued
}

func (e *TokenEndpoint) serveToken(w http.ResponseWriter, r *http.Request) {
	refuse := func(description string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": description})
	}
	if r.Method != http.MethodPost || r.FormValue("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		refuse("unsupported grant")
		return
	}
	claims, err := e.verify(r.FormValue("assertion"))
	if err != nil {
		refuse(err.Error())
		return
	}
	if !strings.Contains(claims.Scope, "https://www.googleapis.com/auth/cloud-platform") {
		refuse("scope cloud-platform missing")
		return
	}
	e.mu.Lock()
	e.issued++
	token := fmt.Sprintf("ya29.test-%d-%s", e.issued, claims.Iss)
	e.mu.Unlock()
	e.server.AcceptToken(token)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": token, "expires_in": 3599, "token_type": "Bearer"})
}

type assertionClaims struct {
	Iss   string `json:"iss"`
	Aud   string `json:"aud"`
	Scope string `json:"scope"`
	Exp   int64  `json:"exp"`
}

// verify checks an RS256 JWT assertion: signed by a known key of its
// issuer, for this endpoint, not expired.
func (e *TokenEndpoint) verify(assertion string) (*assertionClaims, error) {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("malformed assertion")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("malformed assertion")
	}
	var c assertionClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, fmt.Errorf("malformed assertion")
	}
	e.mu.Lock()
	pub := e.keys[c.Iss]
	e.mu.Unlock()
	if pub == nil {
		return nil, fmt.Errorf("Invalid grant: account not found")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, fmt.Errorf("malformed assertion")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig) != nil {
		return nil, fmt.Errorf("Invalid JWT Signature.")
	}
	if c.Aud != e.URL || time.Unix(c.Exp, 0).Before(time.Now()) {
		return nil, fmt.Errorf("Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.")
	}
	return &c, nil
}
