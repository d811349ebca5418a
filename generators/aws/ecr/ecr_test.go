package ecr

import (
	"context"
	"errors"
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
	"github.com/eso-dev/eso/generators"
	"github.com/eso-dev/eso/providers"
	"github.com/eso-dev/eso/providers/aws/awstest"
)

// These tests run against moto_server, an AWS API emulator.

var (
	ref   = providers.Ref{Kind: Kind, Namespace: awstest.Namespace, Name: "ecr"}
	scope = providers.Scope{Namespace: awstest.Namespace}
)

// newGenerator serves spec as ECRAuthorizationToken team/ecr, beside the
// Secret aws-creds (keys id and secret) awstest.StaticAuth names.
func newGenerator(t *testing.T, spec genv1.ECRAuthorizationTokenSpec, keyID, secretKey string) generators.Generator {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = genv1.AddToScheme(scheme)
	cfg := &genv1.ECRAuthorizationToken{ObjectMeta: metav1.ObjectMeta{Namespace: awstest.Namespace, Name: "ecr"}, Spec: spec}
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: awstest.Namespace, Name: "aws-creds"},
		Data: map[string][]byte{"id": []byte(keyID), "secret": []byte(secretKey)}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cfg, creds).Build()
	return Registration.New(providers.Deps{Client: c, APIReader: c})
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
	if !errors.Is(err, providers.ErrAuthFailed) || strings.Contains(err.Error(), "not-the-secret-key-of-eso") {
		t.Errorf("refused keys: %v", err)
	}

	unreachable := spec("http://127.0.0.1:1")
	if err := newGenerator(t, unreachable, "id", "secret").Validate(ctx, ref, scope); err != nil {
		t.Errorf("Validate: %v", err)
	}
	missingKey := unreachable
	missingKey.Auth = awstest.StaticAuth()
	missingKey.Auth.SecretRef.SecretAccessKey.Key = "other"
	if err := newGenerator(t, missingKey, "id", "secret").Validate(ctx, ref, scope); !errors.Is(err, providers.ErrInvalidConfig) || !strings.Contains(err.Error(), `"other"`) {
		t.Errorf("Validate without the key: %v", err)
	}
	noAuth := unreachable
	noAuth.Auth = nil
	if err := newGenerator(t, noAuth, "id", "secret").Validate(ctx, ref, scope); !errors.Is(err, providers.ErrNoAmbientCredentials) {
		t.Errorf("Validate without auth or ambient credentials: %v", err)
	}
	if err := newGenerator(t, unreachable, "id", "secret").Validate(ctx, providers.Ref{Kind: Kind, Namespace: awstest.Namespace, Name: "missing"}, scope); !errors.Is(err, providers.ErrConfigNotFound) {
		t.Errorf("Validate of a missing configuration: %v", err)
	}
}
