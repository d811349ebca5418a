package awsauth

import (
	"context"
	"errors"
	"net/http"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/eso-dev/eso/providers"
)

func apiErr(service, code string) error {
	return &smithy.OperationError{ServiceID: service, OperationName: "Call", Err: &smithy.GenericAPIError{Code: code, Message: "m"}}
}

// viaSTS is how a refusal while obtaining role credentials reaches a call
// to another service.
func viaSTS(code string) error {
	return &smithy.OperationError{ServiceID: "Secrets Manager", OperationName: "GetSecretValue", Err: apiErr("STS", code)}
}

func status(code int) error {
	return &smithy.OperationError{ServiceID: "Secrets Manager", OperationName: "ListSecrets", Err: &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: errors.New("undecodable body")}}}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"unknown key", apiErr("Secrets Manager", "UnrecognizedClientException"), providers.ErrAuthFailed},
		{"expired token", apiErr("SSM", "ExpiredTokenException"), providers.ErrAuthFailed},
		{"missing permission", apiErr("Secrets Manager", "AccessDeniedException"), providers.ErrOutOfScope},
		{"role refuses eso", viaSTS("AccessDenied"), providers.ErrAuthFailed},
		{"throttled", apiErr("Secrets Manager", "ThrottlingException"), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.err)
			for _, sentinel := range []error{providers.ErrAuthFailed, providers.ErrOutOfScope} {
				if errors.Is(got, sentinel) != (sentinel == tc.want) {
					t.Errorf("Classify(%v) = %v; want it to wrap %v", tc.err, got, tc.want)
				}
			}
		})
	}
}

func TestCheckAuth(t *testing.T) {
	cases := []struct {
		name    string
		probe   error
		refused bool
		passes  bool
	}{
		{"accepted", nil, false, true},
		{"access denied still proves the identity", apiErr("Secrets Manager", "AccessDeniedException"), false, true},
		{"refused key", apiErr("Secrets Manager", "UnrecognizedClientException"), true, false},
		{"role refuses eso", viaSTS("AccessDenied"), true, false},
		{"403 without a readable code", status(http.StatusForbidden), true, false},
		{"unavailable", status(http.StatusServiceUnavailable), false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckAuth(context.Background(), func(context.Context) error { return tc.probe })
			if (err == nil) != tc.passes || errors.Is(err, providers.ErrAuthFailed) != tc.refused {
				t.Fatalf("CheckAuth = %v; want passes=%v refused=%v", err, tc.passes, tc.refused)
			}
		})
	}
}
