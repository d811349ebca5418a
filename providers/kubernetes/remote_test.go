package kubernetes

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/app/grpcclient/grpcclienttest"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// fakeAPIServer is an API server a tenant could run: it answers with
// whatever answer returns and records the Authorization headers it got.
type fakeAPIServer struct {
	*httptest.Server
	caPEM []byte

	mu          sync.Mutex
	seen        []string
	clientCerts int // requests that came with a client certificate
	answer      func(w http.ResponseWriter, r *http.Request)
}

func startFakeAPIServer(t *testing.T) *fakeAPIServer {
	t.Helper()
	f := &fakeAPIServer{}
	f.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.seen = append(f.seen, r.Header.Get("Authorization"))
		if len(r.TLS.PeerCertificates) > 0 {
			f.clientCerts++
		}
		answer := f.answer
		f.mu.Unlock()
		answer(w, r)
	}))
	f.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	f.StartTLS()
	t.Cleanup(f.Close)
	f.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.Certificate().Raw})
	return f
}

func (f *fakeAPIServer) serve(answer func(w http.ResponseWriter, r *http.Request)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answer = answer
}

func (f *fakeAPIServer) authorizations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// status answers as the API server does when it refuses a call.
func status(code int, reason metav1.StatusReason) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Code: int32(code), Reason: reason, Message: "the server's own words: hunter2"})
	}
}

func secretJSON(name string, data map[string]string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		s := corev1.Secret{TypeMeta: metav1.TypeMeta{Kind: "Secret", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps"}, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s)
	}
}

// credentialObjects are a tenant's Secrets in its namespace "team": a
// bearer token and eso's own cluster configuration that must never be
// presented anywhere.
func tenantDeps(t *testing.T, objs ...client.Object) plugin.Deps {
	t.Helper()
	objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hub-token"},
		Data: map[string][]byte{"token": []byte("tenant-token\n")}})
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
	return plugin.Deps{Client: c, APIReader: c}
}

func tokenAuth() *provv1.KubernetesAuth {
	return &provv1.KubernetesAuth{Token: &provv1.KubernetesTokenAuth{BearerToken: provv1.SecretKeySelector{Name: "hub-token", Key: "token"}}}
}

func remoteClient(t *testing.T, deps plugin.Deps, spec provv1.KubernetesSpec) *Client {
	t.Helper()
	cl, err := connect(context.Background(), deps, &provv1.Kubernetes{Spec: spec}, plugin.Scope{Namespace: "team"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close(context.Background()) })
	return cl.(*Client)
}

// TestOwnIdentityIsNeverPresented: with auth, eso presents only the
// token the configuration names, to another cluster and to its own (whose
// address and CA it reuses, never its credentials).
func TestOwnIdentityIsNeverPresented(t *testing.T) {
	srv := startFakeAPIServer(t)
	srv.serve(secretJSON("db", map[string]string{"password": "pw"}))
	deps := tenantDeps(t)
	esoCert, esoKey := grpcclienttest.NewCA(t, "eso's cluster").Issue(t, "eso", false)
	deps.RESTConfig = &rest.Config{Host: srv.URL, BearerToken: "eso-own-token",
		TLSClientConfig: rest.TLSClientConfig{CAData: srv.caPEM, CertData: esoCert, KeyData: esoKey}}
	for name, spec := range map[string]provv1.KubernetesSpec{
		"another cluster": {RemoteNamespace: "apps", Auth: tokenAuth(),
			Server: &provv1.KubernetesServer{URL: srv.URL, CABundle: srv.caPEM}},
		"this cluster": {RemoteNamespace: "apps", Auth: tokenAuth()},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := remoteClient(t, deps, spec).GetSecret(context.Background(), esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "password"})
			if err != nil || string(got) != "pw" {
				t.Fatalf("GetSecret = %q, %v", got, err)
			}
		})
	}
	for _, a := range srv.authorizations() {
		if a != "Bearer tenant-token" {
			t.Errorf("the server got Authorization %q, want only the configured token", a)
		}
	}
	if srv.clientCerts > 0 {
		t.Errorf("%d requests presented a client certificate: eso's own", srv.clientCerts)
	}
}

// TestRemoteAnswersAreClassified: what another cluster answers maps to the
// contract's classes, never to "not found" unless the API server says so,
// and no error repeats what the server wrote.
func TestRemoteAnswersAreClassified(t *testing.T) {
	srv := startFakeAPIServer(t)
	cl := remoteClient(t, tenantDeps(t), provv1.KubernetesSpec{RemoteNamespace: "apps", Auth: tokenAuth(),
		Server: &provv1.KubernetesServer{URL: srv.URL, CABundle: srv.caPEM}})
	html404 := func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("<html>no such page: hunter2</html>"))
	}
	huge := func(w http.ResponseWriter, r *http.Request) {
		secretJSON("db", map[string]string{"v": strings.Repeat("x", plugin.MaxResponseBytes)})(w, r)
	}
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request)
		want   error
	}{
		{"revoked token", status(http.StatusUnauthorized, metav1.StatusReasonUnauthorized), plugin.ErrAuthFailed},
		{"forbidden", status(http.StatusForbidden, metav1.StatusReasonForbidden), plugin.ErrOutOfScope},
		{"not found", status(http.StatusNotFound, metav1.StatusReasonNotFound), plugin.ErrSecretNotFound},
		{"overloaded", status(http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests), plugin.ErrThrottled},
		{"down behind a proxy", status(http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable), plugin.ErrUnavailable},
		{"a web page, not an API server", html404, plugin.ErrUnavailable},
		{"an answer over the bound", huge, plugin.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.serve(tc.answer)
			_, err := cl.GetSecret(context.Background(), esv1.ExternalSecretDataRemoteRef{Key: "db"})
			if !errors.Is(err, tc.want) {
				t.Fatalf("GetSecret: %v, want %v", err, tc.want)
			}
			if tc.want != plugin.ErrSecretNotFound && errors.Is(err, plugin.ErrSecretNotFound) {
				t.Fatalf("%v counts as the Secret being gone", err)
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "tenant-token") || strings.Contains(err.Error(), "xxxx") {
				t.Fatalf("the error repeats the server's words or a credential: %v", err)
			}
		})
	}
	srv.Close()
	if _, err := cl.GetSecret(context.Background(), esv1.ExternalSecretDataRemoteRef{Key: "db"}); !errors.Is(err, plugin.ErrUnavailable) {
		t.Errorf("a server that is down: %v, want ErrUnavailable", err)
	}
}

// TestRefusedCredentialsAreReadAgain: after a 401, or a certificate the CA
// does not verify, the next call reads the token and the CA again, so a
// rotated token or CA is picked up without a new configuration.
func TestRefusedCredentialsAreReadAgain(t *testing.T) {
	srv := startFakeAPIServer(t)
	other := grpcclienttest.NewCA(t, "another CA")
	caSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hub-ca"}, Data: map[string][]byte{"ca.crt": other.PEM}}
	deps := tenantDeps(t, caSecret)
	cl := remoteClient(t, deps, provv1.KubernetesSpec{RemoteNamespace: "apps", Auth: tokenAuth(),
		Server: &provv1.KubernetesServer{URL: srv.URL, CAProvider: &provv1.CAProvider{Type: provv1.CAProviderSecret, Name: "hub-ca", Key: "ca.crt"}}})
	ctx := context.Background()
	read := func() error {
		_, err := cl.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"})
		return err
	}
	srv.serve(secretJSON("db", map[string]string{"v": "1"}))
	if err := read(); err == nil || !strings.Contains(err.Error(), "caProvider") {
		t.Fatalf("with the wrong CA: %v, want an error pointing at the CA", err)
	}
	caSecret.Data["ca.crt"] = srv.caPEM
	if err := deps.Client.Update(ctx, caSecret); err != nil {
		t.Fatal(err)
	}
	if err := read(); err != nil {
		t.Fatalf("after the CA Secret changed: %v", err)
	}

	srv.serve(status(http.StatusUnauthorized, metav1.StatusReasonUnauthorized))
	if err := read(); !errors.Is(err, plugin.ErrAuthFailed) {
		t.Fatalf("revoked: %v", err)
	}
	rotated := &corev1.Secret{}
	if err := deps.Client.Get(ctx, client.ObjectKey{Namespace: "team", Name: "hub-token"}, rotated); err != nil {
		t.Fatal(err)
	}
	rotated.Data["token"] = []byte("rotated-token")
	if err := deps.Client.Update(ctx, rotated); err != nil {
		t.Fatal(err)
	}
	srv.serve(secretJSON("db", map[string]string{"v": "1"}))
	if err := read(); err != nil {
		t.Fatal(err)
	}
	seen := srv.authorizations()
	if last := seen[len(seen)-1]; last != "Bearer rotated-token" {
		t.Errorf("after a 401 the next call presented %q, want the rotated token", last)
	}
}

// TestCredentialsStayInTheCredentialsNamespace: the token, certificate and
// CA are read in the credentials namespace only; the same names in another
// namespace are never found.
func TestCredentialsStayInTheCredentialsNamespace(t *testing.T) {
	elsewhere := func(name string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: name},
			Data: map[string][]byte{"k": []byte("v"), "ca.crt": []byte("-----BEGIN CERTIFICATE-----")}}
	}
	deps := tenantDeps(t, elsewhere("their-token"), elsewhere("their-cert"), elsewhere("their-ca"))
	sel := func(name string) provv1.SecretKeySelector { return provv1.SecretKeySelector{Name: name, Key: "k"} }
	server := &provv1.KubernetesServer{URL: "https://hub.example.com"}
	for name, spec := range map[string]provv1.KubernetesSpec{
		"token": {Server: server, Auth: &provv1.KubernetesAuth{Token: &provv1.KubernetesTokenAuth{BearerToken: sel("their-token")}}},
		"cert":  {Server: server, Auth: &provv1.KubernetesAuth{Cert: &provv1.KubernetesCertAuth{ClientCert: sel("their-cert"), ClientKey: sel("their-cert")}}},
		"ca": {Auth: tokenAuth(), Server: &provv1.KubernetesServer{URL: "https://hub.example.com",
			CAProvider: &provv1.CAProvider{Type: provv1.CAProviderSecret, Name: "their-ca", Key: "ca.crt"}}},
	} {
		t.Run(name, func(t *testing.T) {
			err := checkCredentials(context.Background(), deps, &provv1.Kubernetes{Spec: spec}, plugin.Scope{Namespace: "team"})
			if !errors.Is(err, plugin.ErrCredentialsNotFound) || !strings.Contains(err.Error(), "team/their-") {
				t.Fatalf("CheckCredentials: %v, want the Secret not found in team", err)
			}
		})
	}
}

// TestCredentialSizesAreBounded: a CA bundle over kit.MaxCABundleBytes and
// a token over maxTokenBytes are refused before any connection.
func TestCredentialSizesAreBounded(t *testing.T) {
	big := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "big"},
		Data: map[string][]byte{"token": make([]byte, maxTokenBytes+1), "ca.crt": make([]byte, kit.MaxCABundleBytes+1)}}
	deps := tenantDeps(t, big)
	server := provv1.KubernetesServer{URL: "https://hub.example.com"}
	withCA := server
	withCA.CAProvider = &provv1.CAProvider{Type: provv1.CAProviderSecret, Name: "big", Key: "ca.crt"}
	for name, spec := range map[string]provv1.KubernetesSpec{
		"token": {Server: &server, Auth: &provv1.KubernetesAuth{Token: &provv1.KubernetesTokenAuth{BearerToken: provv1.SecretKeySelector{Name: "big", Key: "token"}}}},
		"ca":    {Server: &withCA, Auth: tokenAuth()},
	} {
		t.Run(name, func(t *testing.T) {
			err := checkCredentials(context.Background(), deps, &provv1.Kubernetes{Spec: spec}, plugin.Scope{Namespace: "team"})
			if !errors.Is(err, plugin.ErrInvalidConfig) || !strings.Contains(err.Error(), "KiB") {
				t.Fatalf("CheckCredentials: %v, want a refusal naming the bound", err)
			}
		})
	}
}

// TestLargePagesAreListedSmaller: another cluster's list page over the
// response bound is asked again at half the size; the find succeeds when
// each smaller page fits.
func TestLargePagesAreListedSmaller(t *testing.T) {
	srv := startFakeAPIServer(t)
	value := strings.Repeat("x", 100<<10) // 100 KiB a Secret: 100 of them are over 2 MiB, 12 are not
	var limits []string
	srv.serve(func(w http.ResponseWriter, r *http.Request) {
		limits = append(limits, r.URL.Query().Get("limit"))
		var n int
		_, _ = fmt.Sscan(r.URL.Query().Get("limit"), &n)
		list := corev1.SecretList{TypeMeta: metav1.TypeMeta{Kind: "SecretList", APIVersion: "v1"}}
		for i := range min(n, 30) {
			list.Items = append(list.Items, corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", i)}, Data: map[string][]byte{"v": []byte(value)}})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(list)
	})
	cl := remoteClient(t, tenantDeps(t), provv1.KubernetesSpec{RemoteNamespace: "apps", Auth: tokenAuth(),
		Server: &provv1.KubernetesServer{URL: srv.URL, CABundle: srv.caPEM}})
	got, err := cl.GetAllSecrets(context.Background(), esv1.ExternalSecretFind{Name: &esv1.FindName{RegExp: "^s1$"}})
	if err != nil || len(got) != 1 {
		t.Fatalf("find = %d results, %v; limits asked %v", len(got), err, limits)
	}
	if strings.Join(limits, ",") != "100,50,25,12" {
		t.Errorf("limits asked: %v, want 100,50,25,12", limits)
	}
}
