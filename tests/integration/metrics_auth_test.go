package integration

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMetricsNeedAnAuthorizedToken: with --metrics-secure, /metrics answers
// 401 without a token or with one the API server does not know, 403 to a
// ServiceAccount not allowed to get /metrics, and the metrics to one that is.
func TestMetricsNeedAnAuthorizedToken(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t, "metrics-auth", nil)
	cfg := testConfig()
	cfg.Namespace = ns
	cfg.MetricsAddr, cfg.MetricsSecure = freeAddr(t), true
	runEso(t, cfg)

	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-scrape"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-scrape"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "scraper"}}}
	create(t, role, binding,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scraper"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nosy"}})
	t.Cleanup(func() { _ = env.Client.Delete(ctx, binding); _ = env.Client.Delete(ctx, role) })

	token := func(sa string) string {
		tr := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptrInt64(600)}}
		if err := env.Client.SubResource("token").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}}, tr); err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	scrape := func(bearer string) (int, string, error) {
		req, _ := http.NewRequest(http.MethodGet, "https://"+cfg.MetricsAddr+"/metrics", nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		// The endpoint's certificate is self-signed: what is tested is who
		// may read, not the server's identity.
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec
		resp, err := c.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(body), nil
	}
	expect := func(who, bearer string, want int) string {
		var body string
		eventually(t, fmt.Sprintf("a scrape %s to answer %d", who, want), func() error {
			code, b, err := scrape(bearer)
			if err != nil {
				return err
			}
			if code != want {
				return fmt.Errorf("answered %d", code)
			}
			body = b
			return nil
		})
		return body
	}
	expect("without a token", "", http.StatusUnauthorized)
	expect("with an unknown token", "not-a-token", http.StatusUnauthorized)
	expect("by a ServiceAccount without the permission", token("nosy"), http.StatusForbidden)
	if body := expect("by the scraper", token("scraper"), http.StatusOK); !strings.Contains(body, "controller_runtime_") {
		t.Errorf("the scraper got no metrics: %.200s", body)
	}
}

// freeAddr is a loopback address with a port nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func ptrInt64(v int64) *int64 { return &v }
