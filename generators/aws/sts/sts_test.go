package sts

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/aws/awstest"
	"github.com/eso-dev/eso/providers/plugin"
)

// These tests run against moto_server, an AWS API emulator.

var (
	ref   = plugin.Ref{Kind: Kind, Namespace: awstest.Namespace, Name: "sts"}
	scope = plugin.Scope{Namespace: awstest.Namespace}
)

// newGenerator serves spec as STSSessionToken team/sts, beside the Secret
// aws-creds (keys id and secret) awstest.StaticAuth names.
func newGenerator(t *testing.T, spec genv1.STSSessionTokenSpec, keyID, secretKey string) plugin.Generator {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = genv1.AddToScheme(scheme)
	cfg := &genv1.STSSessionToken{ObjectMeta: metav1.ObjectMeta{Namespace: awstest.Namespace, Name: "sts"}, Spec: spec}
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: awstest.Namespace, Name: "aws-creds"},
		Data: map[string][]byte{"id": []byte(keyID), "secret": []byte(secretKey)}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cfg, creds).Build()
	return Registration.NewGenerator(plugin.Deps{Client: c, APIReader: c})
}

func spec(endpoint string, params *genv1.STSSessionTokenRequestParameters) genv1.STSSessionTokenSpec {
	return genv1.STSSessionTokenSpec{
		AWSGeneratorSpec:  genv1.AWSGeneratorSpec{Region: "eu-central-1", Endpoint: endpoint, Auth: awstest.StaticAuth()},
		RequestParameters: params,
	}
}

// TestGenerateSessionToken gets credentials with a chosen duration and MFA
// parameters (moto takes any code) from a moto that authenticates the
// configured keys. moto does not accept the credentials it issued in turn,
// so their use is not tested here.
func TestGenerateSessionToken(t *testing.T) {
	ctx := context.Background()
	endpoint, keyID, secretKey := awstest.StartMotoWithIAM(t)
	params := &genv1.STSSessionTokenRequestParameters{SessionDuration: ptr.To[int32](900),
		SerialNumber: ptr.To("arn:aws:iam::123456789012:mfa/eso"), TokenCode: ptr.To("123456")}
	start := time.Now()
	values, state, err := newGenerator(t, spec(endpoint, params), keyID, secretKey).Generate(ctx, ref, scope)
	if err != nil {
		t.Fatal(err)
	}
	if state != nil {
		t.Errorf("state %s: session tokens cannot be revoked", state)
	}
	for _, k := range []string{"access_key_id", "secret_access_key", "session_token"} {
		if len(values[k]) == 0 {
			t.Errorf("output lacks %s", k)
		}
	}
	expiration, err := strconv.ParseInt(string(values["expiration"]), 10, 64)
	if err != nil {
		t.Fatalf("expiration = %q, want Unix seconds", values["expiration"])
	}
	if d := time.Unix(expiration, 0).Sub(start); d < 890*time.Second || d > 910*time.Second {
		t.Errorf("expiration %v after the request, want sessionDuration 900s", d)
	}
	if string(values["secret_access_key"]) == secretKey {
		t.Error("the generated credentials are the configured ones")
	}
}

// TestRefusedKeysAndValidate: keys AWS does not know are ErrAuthFailed
// without the secret key in the message; Validate resolves references
// without calling AWS.
func TestRefusedKeysAndValidate(t *testing.T) {
	ctx := context.Background()
	endpoint, keyID, _ := awstest.StartMotoWithIAM(t)
	_, _, err := newGenerator(t, spec(endpoint, nil), keyID, "not-the-secret-key-of-eso").Generate(ctx, ref, scope)
	if !errors.Is(err, plugin.ErrAuthFailed) || strings.Contains(err.Error(), "not-the-secret-key-of-eso") {
		t.Errorf("refused keys: %v", err)
	}

	unreachable := spec("http://127.0.0.1:1", nil)
	if err := newGenerator(t, unreachable, "id", "secret").Validate(ctx, ref, scope); err != nil {
		t.Errorf("Validate: %v", err)
	}
	jwtWithoutRole := unreachable
	jwtWithoutRole.Auth = &provv1.AWSAuth{JWT: &provv1.AWSJWTAuth{ServiceAccountRef: provv1.KubernetesServiceAccount{Name: "sa"}}}
	if err := newGenerator(t, jwtWithoutRole, "id", "secret").Validate(ctx, ref, scope); !errors.Is(err, plugin.ErrInvalidConfig) || !strings.Contains(err.Error(), "needs role") {
		t.Errorf("Validate of web identity without role: %v", err)
	}
	missingSecret := unreachable
	missingSecret.Auth = &provv1.AWSAuth{SecretRef: &provv1.AWSAuthSecretRef{
		AccessKeyID:     provv1.SecretKeySelector{Name: "elsewhere", Key: "id"},
		SecretAccessKey: provv1.SecretKeySelector{Name: "elsewhere", Key: "secret"}}}
	if err := newGenerator(t, missingSecret, "id", "secret").Validate(ctx, ref, scope); !errors.Is(err, plugin.ErrInvalidConfig) || !strings.Contains(err.Error(), "team/elsewhere") {
		t.Errorf("Validate with a missing Secret: %v", err)
	}
}
