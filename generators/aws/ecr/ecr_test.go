package ecr

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/providers/aws/awstest"
	"github.com/eso-dev/eso/providers/plugin"
)

// These tests run against moto_server, an AWS API emulator.

var (
	ref   = plugin.Ref{Kind: Kind, Namespace: awstest.Namespace, Name: "ecr"}
	scope = plugin.Scope{Namespace: awstest.Namespace}
)

// newGenerator serves spec as ECRAuthorizationToken team/ecr, beside the
// Secret aws-creds (keys id and secret) awstest.StaticAuth names.
func newGenerator(t *testing.T, spec genv1.ECRAuthorizationTokenSpec, keyID, secretKey string) plugin.Generator {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = genv1.AddToScheme(scheme)
	cfg := &genv1.ECRAuthorizationToken{ObjectMeta: metav1.ObjectMeta{Namespace: awstest.Namespace, Name: "ecr"}, Spec: spec}
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: awstest.Namespace, Name: "aws-creds"},
		Data: map[string][]byte{"id": []byte(keyID), "secret": []byte(secretKey)}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cfg, creds).Build()
	return Registration.NewGenerator(plugin.Deps{Client: c, APIReader: c})
}

func spec(endpoint string) genv1.ECRAuthorizationTokenSpec {
	return genv1.ECRAuthorizationTokenSpec{AWSGeneratorSpec: genv1.AWSGeneratorSpec{
		Region: "eu-central-1", Endpoint: endpoint, STSEndpoint: endpoint, Auth: awstest.StaticAuth()}}
}

func TestGenerateRegistryLogin(t *testing.T) {
	ctx := context.Background()
	endpoint := awstest.StartMoto(t)
	for name, s := range map[string]genv1.ECRAuthorizationTokenSpec{
		"static keys": spec(endpoint),
		"assumed role": func() genv1.ECRAuthorizationTokenSpec {
			s := spec(endpoint)
			s.Role = "arn:aws:iam::123456789012:role/registry"
			return s
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			values, state, err := newGenerator(t, s, "AKIDEXAMPLE", "wJalrXUtnFEMI").Generate(ctx, ref, scope)
			if err != nil {
				t.Fatal(err)
			}
			if state != nil {
				t.Errorf("state %s: ECR tokens cannot be revoked", state)
			}
			if string(values["username"]) != "AWS" || len(values["password"]) == 0 {
				t.Errorf("username %q, password of %d bytes", values["username"], len(values["password"]))
			}
			if !regexp.MustCompile(`^https://\d{12}\.dkr\.ecr\.eu-central-1\.amazonaws\.com$`).Match(values["proxy_endpoint"]) {
				t.Errorf("proxy_endpoint = %q", values["proxy_endpoint"])
			}
			// moto answers with a fixed expiry (2015-01-01).
			expires, err := strconv.ParseInt(string(values["expires_at"]), 10, 64)
			if err != nil || time.Unix(expires, 0).Year() < 2015 {
				t.Errorf("expires_at = %q, want Unix seconds", values["expires_at"])
			}
		})
	}
}

// TestRefusedKeysAndValidate: keys AWS does not know are ErrAuthFailed
// without the secret key in the message; Validate resolves references
// without calling AWS.
func TestRefusedKeysAndValidate(t *testing.T) {
	ctx := context.Background()
	endpoint, keyID, secretKey := awstest.StartMotoWithIAM(t)
	if _, _, err := newGenerator(t, spec(endpoint), keyID, secretKey).Generate(ctx, ref, scope); err != nil {
		t.Fatalf("accepted keys: %v", err)
	}
	_, _, err := newGenerator(t, spec(endpoint), keyID, "not-the-secret-key-of-eso").Generate(ctx, ref, scope)
	if !errors.Is(err, plugin.ErrAuthFailed) || strings.Contains(err.Error(), "not-the-secret-key-of-eso") {
		t.Errorf("refused keys: %v", err)
	}

	unreachable := spec("http://127.0.0.1:1")
	if err := newGenerator(t, unreachable, "id", "secret").Validate(ctx, ref, scope); err != nil {
		t.Errorf("Validate: %v", err)
	}
	missingKey := unreachable
	missingKey.Auth = awstest.StaticAuth()
	missingKey.Auth.SecretRef.SecretAccessKey.Key = "other"
	if err := newGenerator(t, missingKey, "id", "secret").Validate(ctx, ref, scope); !errors.Is(err, plugin.ErrInvalidConfig) || !strings.Contains(err.Error(), `"other"`) {
		t.Errorf("Validate without the key: %v", err)
	}
	noAuth := unreachable
	noAuth.Auth = nil
	if err := newGenerator(t, noAuth, "id", "secret").Validate(ctx, ref, scope); !errors.Is(err, plugin.ErrNoAmbientCredentials) {
		t.Errorf("Validate without auth or ambient credentials: %v", err)
	}
	if err := newGenerator(t, unreachable, "id", "secret").Validate(ctx, plugin.Ref{Kind: Kind, Namespace: awstest.Namespace, Name: "missing"}, scope); !errors.Is(err, plugin.ErrConfigNotFound) {
		t.Errorf("Validate of a missing configuration: %v", err)
	}
}

// ecrPublicServer answers ECR Public's GetAuthorizationToken (AWS JSON 1.1,
// target SpencerFrontendService.GetAuthorizationToken) as AWS documents it;
// moto has no ECR Public. It records the region each request was signed
// for.
func ecrPublicServer(t *testing.T, token string, expires int64) (url string, regions chan string) {
	t.Helper()
	regions = make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") != "SpencerFrontendService.GetAuthorizationToken" {
			http.Error(w, `{"__type":"UnknownOperationException"}`, http.StatusBadRequest)
			return
		}
		// Credential=<key>/<date>/<region>/ecr-public/aws4_request
		if _, scope, ok := strings.Cut(r.Header.Get("Authorization"), "Credential="); ok {
			if parts := strings.Split(scope, "/"); len(parts) > 3 && strings.HasPrefix(parts[3], "ecr-public") {
				regions <- parts[2]
			}
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		fmt.Fprintf(w, `{"authorizationData":{"authorizationToken":%q,"expiresAt":%d}}`, token, expires)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, regions
}

// TestPublicScope: scope public asks ECR Public, signed for us-east-1
// whatever region the configuration names, and returns the login without a
// proxy_endpoint, as upstream does; a malformed token is refused without
// quoting it.
func TestPublicScope(t *testing.T) {
	ctx := context.Background()
	endpoint, regions := ecrPublicServer(t, base64.StdEncoding.EncodeToString([]byte("AWS:public-secret")), 1767225600)
	s := spec(endpoint)
	s.Scope = genv1.ECRScopePublic
	values, state, err := newGenerator(t, s, "AKIDEXAMPLE", "wJalrXUtnFEMI").Generate(ctx, ref, scope)
	if err != nil {
		t.Fatal(err)
	}
	if state != nil {
		t.Errorf("state %s: ECR Public tokens cannot be revoked", state)
	}
	want := map[string]string{"username": "AWS", "password": "public-secret", "expires_at": "1767225600"}
	if len(values) != len(want) {
		t.Errorf("keys %v, want %v", keysOf(values), want)
	}
	for k, v := range want {
		if string(values[k]) != v {
			t.Errorf("%s = %q, want %q", k, values[k], v)
		}
	}
	select {
	case got := <-regions:
		if got != "us-east-1" {
			t.Errorf("signed for %s, want us-east-1 (the configuration says %s)", got, s.Region)
		}
	default:
		t.Error("the request carried no SigV4 credential scope for ecr-public")
	}

	bad, _ := ecrPublicServer(t, base64.StdEncoding.EncodeToString([]byte("no-separator-secret")), 0)
	s = spec(bad)
	s.Scope = genv1.ECRScopePublic
	_, _, err = newGenerator(t, s, "AKIDEXAMPLE", "wJalrXUtnFEMI").Generate(ctx, ref, scope)
	if err == nil || !strings.Contains(err.Error(), "not of the form user:password") || strings.Contains(err.Error(), "no-separator-secret") {
		t.Errorf("malformed token: %v", err)
	}
}

// TestUnknownScopeIsRefused: a scope the schema would refuse (an object
// that bypassed it) is refused, not read as private.
func TestUnknownScopeIsRefused(t *testing.T) {
	s := spec("http://127.0.0.1:1")
	s.Scope = "Public"
	_, _, err := newGenerator(t, s, "AKIDEXAMPLE", "wJalrXUtnFEMI").Generate(context.Background(), ref, scope)
	if !errors.Is(err, plugin.ErrInvalidConfig) || !strings.Contains(err.Error(), `scope "Public"`) {
		t.Errorf("err = %v, want the scope refused", err)
	}
}

func keysOf(m map[string][]byte) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
