// Package awstest runs a real moto server (moto_server, an AWS API emulator)
// on loopback for the AWS providers' tests, and fakes the Kubernetes side
// (configuration object and credentials Secret).
package awstest

import (
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"testing"
	"time"

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
