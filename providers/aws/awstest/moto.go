// Package awstest runs a real moto server (moto_server, an AWS API emulator)
// on loopback for the AWS providers' tests, and fakes the Kubernetes side
// (configuration object and credentials Secret).
package awstest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
)

// StartMoto starts moto_server on a free loopback port for the test and
// returns its endpoint. moto has no persistence: every test gets a clean AWS.
func StartMoto(t testing.TB) string {
	t.Helper()
	return startMoto(t)
}

func startMoto(t testing.TB, env ...string) string {
	t.Helper()
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		t.Fatal("moto_server not found: the AWS provider tests need it (pip install 'moto[server]'); make test checks for it")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting moto_server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(endpoint + "/moto-api/"); err == nil {
			resp.Body.Close()
			return endpoint
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("moto_server did not answer within 30s")
	return ""
}

// iamSetupCalls is how many unauthenticated calls StartMotoWithIAM needs to
// create its user; moto enforces IAM authentication from the next call on.
const iamSetupCalls = 3

// StartMotoWithIAM starts a moto_server that authenticates every call the way
// AWS does and returns its endpoint and the access keys of an IAM user allowed
// everything. Any other keys are refused (InvalidClientTokenId,
// SignatureDoesNotMatch), so tests can show what eso does with bad
// credentials.
func StartMotoWithIAM(t testing.TB) (endpoint, keyID, secretKey string) {
	t.Helper()
	endpoint = startMoto(t, "INITIAL_NO_AUTH_ACTION_COUNT="+strconv.Itoa(iamSetupCalls))
	iam := func(form url.Values) []byte {
		form.Set("Version", "2010-05-08")
		body := form.Encode()
		req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		sum := sha256.Sum256([]byte(body))
		creds := aws.Credentials{AccessKeyID: "setup", SecretAccessKey: "setup"}
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "iam", "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("moto IAM %s: %s: %s", form.Get("Action"), resp.Status, out)
		}
		return out
	}
	iam(url.Values{"Action": {"CreateUser"}, "UserName": {"eso"}})
	iam(url.Values{"Action": {"PutUserPolicy"}, "UserName": {"eso"}, "PolicyName": {"all"},
		"PolicyDocument": {`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`}})
	var key struct {
		ID     string `xml:"CreateAccessKeyResult>AccessKey>AccessKeyId"`
		Secret string `xml:"CreateAccessKeyResult>AccessKey>SecretAccessKey"`
	}
	if err := xml.Unmarshal(iam(url.Values{"Action": {"CreateAccessKey"}, "UserName": {"eso"}}), &key); err != nil || key.ID == "" {
		t.Fatalf("moto CreateAccessKey: no key in the answer (%v)", err)
	}
	return endpoint, key.ID, key.Secret
}

// Namespace is where Kube puts the provider configuration and credentials.
const Namespace = "team"

// StaticAuth references the access keys Kube stores in Secret aws-creds.
func StaticAuth() *provv1.AWSAuth {
	return &provv1.AWSAuth{SecretRef: &provv1.AWSAuthSecretRef{
		AccessKeyID:     provv1.SecretKeySelector{Name: "aws-creds", Key: "id"},
		SecretAccessKey: provv1.SecretKeySelector{Name: "aws-creds", Key: "secret"},
	}}
}

// Kube is a fake Kubernetes API holding cfg (in Namespace) and the Secret
// StaticAuth points at.
func Kube(t testing.TB, cfg client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := provv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cfg.SetNamespace(Namespace)
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: "aws-creds"},
		Data: map[string][]byte{"id": []byte("AKIDEXAMPLE"), "secret": []byte("wJalrXUtnFEMI")}}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(cfg, creds).Build()
}
