package gcpauth

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"cloud.google.com/go/auth"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/eso-dev/eso/providers/plugin"
)

// TestClassify: 4xx answers of a token endpoint are refusals (ErrAuthFailed,
// Unauthenticated for gRPC) quoting only Google's description; throttling,
// server errors and network errors stay transient.
func TestClassify(t *testing.T) {
	answer := func(code int, body string) error {
		return &auth.Error{Response: &http.Response{StatusCode: code}, Body: []byte(body)}
	}
	for _, tc := range []struct {
		err     error
		refused bool
		msg     string
	}{
		{answer(400, `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`), true,
			"token request refused (HTTP 400): invalid_grant: Invalid JWT Signature."},
		{answer(403, `{"error":{"code":403,"message":"Permission denied","status":"PERMISSION_DENIED"}}`), true,
			"token request refused (HTTP 403): Permission denied"},
		{answer(401, `not json, maybe echoing ya29.secret`), true, "token request refused (HTTP 401)"},
		{answer(429, `{"error":"rate_limited"}`), false, ""},
		{answer(503, `{}`), false, ""},
		{errors.New("dial tcp: connection refused"), false, ""},
	} {
		got := classify(tc.err)
		if errors.Is(got, plugin.ErrAuthFailed) != tc.refused {
			t.Errorf("classify(%v) = %v, refused want %v", tc.err, got, tc.refused)
			continue
		}
		if !tc.refused {
			continue
		}
		if got.Error() != tc.msg {
			t.Errorf("message %q, want %q", got, tc.msg)
		}
		if s, _ := status.FromError(got); s.Code() != codes.Unauthenticated {
			t.Errorf("gRPC status of a refusal = %v", s.Code())
		}
	}
}

// TestServiceAccountKeyErrorsDoNotQuoteTheKey: unusable keys are invalid
// configurations, described without their content.
func TestServiceAccountKeyErrorsDoNotQuoteTheKey(t *testing.T) {
	for _, key := range []string{
		`not json s3cr3t`,
		`{"type":"authorized_user","refresh_token":"s3cr3t"}`,
		`{"type":"service_account","client_email":"a@b","private_key":"s3cr3t"}`,
	} {
		_, err := ServiceAccountKey([]byte(key))
		if !errors.Is(err, plugin.ErrInvalidConfig) {
			t.Errorf("key %d: %v, want ErrInvalidConfig", len(key), err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("error quotes the key: %v", err)
		}
	}
}
