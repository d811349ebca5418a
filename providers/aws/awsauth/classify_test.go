package awsauth

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
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
		{"unknown key", apiErr("Secrets Manager", "UnrecognizedClientException"), plugin.ErrAuthFailed},
		{"expired token", apiErr("SSM", "ExpiredTokenException"), plugin.ErrAuthFailed},
		{"missing permission", apiErr("Secrets Manager", "AccessDeniedException"), plugin.ErrOutOfScope},
		{"role refuses eso", viaSTS("AccessDenied"), plugin.ErrAuthFailed},
		{"throttled", apiErr("Secrets Manager", "ThrottlingException"), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.err)
			for _, sentinel := range []error{plugin.ErrAuthFailed, plugin.ErrOutOfScope} {
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
			if (err == nil) != tc.passes || errors.Is(err, plugin.ErrAuthFailed) != tc.refused {
				t.Fatalf("CheckAuth = %v; want passes=%v refused=%v", err, tc.passes, tc.refused)
			}
		})
	}
}

// TestRegionNames: AWS region names of every partition pass; anything else
// is an invalid configuration, not an endpoint to retry for ever.
func TestRegionNames(t *testing.T) {
	for _, region := range []string{"eu-central-1", "us-east-1", "ap-southeast-4", "us-gov-west-1", "cn-north-1", "us-isob-east-1", "il-central-1", "eusc-de-east-1"} {
		if !regionName.MatchString(region) {
			t.Errorf("%s refused", region)
		}
	}
	for _, region := range []string{"Frankfurt", "eu-central", "eu_central_1", "eu-central-1 ", "https://eu-central-1"} {
		_, err := Config(context.Background(), plugin.Deps{}, &provv1.AWSSpec{Region: region}, plugin.Scope{Namespace: "team"})
		if !errors.Is(err, plugin.ErrInvalidConfig) || !strings.Contains(err.Error(), "not an AWS region name") {
			t.Errorf("region %q: %v, want an invalid configuration", region, err)
		}
	}
}
