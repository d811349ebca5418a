package integration

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
)

// untouched checks, for a while eso keeps refreshing, that the Secret is
// the one it was: same resourceVersion, same bytes.
func untouched(t *testing.T, before *corev1.Secret) {
	t.Helper()
	consistently(t, 3*time.Second, "the target Secret stays as it was", func() error {
		var now corev1.Secret
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(before), &now); err != nil {
			return err
		}
		if now.ResourceVersion != before.ResourceVersion {
			return fmt.Errorf("resourceVersion %s, was %s", now.ResourceVersion, before.ResourceVersion)
		}
		for k, v := range before.Data {
			if !bytes.Equal(now.Data[k], v) {
				return fmt.Errorf("key %s changed", k)
			}
		}
		if len(now.Data) != len(before.Data) {
			return fmt.Errorf("has keys %v", keys(now.Data))
		}
		return nil
	})
}

// TestOversizedVaultAnswer: a tenant's store points at a server that speaks
// the Vault API. Once its answer grows past plugin.MaxResponseBytes (here
// a body that does not end), the ExternalSecret shows a ProviderError naming
// the bound, and the Secret it wrote before is left exactly as it was.
func TestOversizedVaultAnswer(t *testing.T) {
	var endless atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1/auth/token/lookup-self":
			_, _ = w.Write([]byte(`{"data":{"id":"t","ttl":0}}`))
		case r.URL.Path == "/v1/secret/data/app/db" && !endless.Load():
			_, _ = w.Write([]byte(`{"data":{"data":{"password":"pw"},"metadata":{"version":1}}}`))
		case r.URL.Path == "/v1/secret/data/app/db":
			vaulttest.WriteEndlessSecret(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)

	ns := env.Namespace(t, "bounds-vault", nil)
	cfg := testConfig()
	cfg.Namespace = ns
	runEso(t, cfg)
	create(t,
		plainSecret(ns, "vault-token", map[string]string{"token": "t"}),
		&provv1.Vault{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault"}, Spec: provv1.VaultSpec{
			Server: srv.URL, Path: "secret", Version: "v2",
			Auth: provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault-token", Key: "token"}}}},
		secretStore(ns, "vault", storeSpec("Vault", "vault", "")),
	)
	es := externalSecret(ns, "app", "SecretStore", "vault", map[string]esv1.ExternalSecretDataRemoteRef{"pw": ref("app/db", "password")})
	es.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second}
	create(t, es)
	before := waitSecretData(t, ns, "app", map[string]string{"pw": "pw"})

	endless.Store(true)
	msg := waitReady(t, es, metav1.ConditionFalse, esv1.ReasonProviderError)
	if !strings.Contains(msg, plugin.FormatBytes(plugin.MaxResponseBytes)) || strings.Contains(msg, "xxx") {
		t.Errorf("condition message %q should name the bound and hold no value", msg)
	}
	untouched(t, before)
}

// TestKubernetesFindOverBound: a find over the store's own namespace stops
// once the tenant has filled it past plugin.MaxFindListed Secrets: the
// ExternalSecret shows a ProviderError saying so, and the Secret the find
// wrote before is left exactly as it was.
func TestKubernetesFindOverBound(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t, "bounds-kube", nil)
	cfg := testConfig()
	cfg.Namespace = ns
	runEso(t, cfg)
	create(t,
		plainSecret(ns, "app-db", map[string]string{"password": "pw"}),
		&provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "local"}},
		secretStore(ns, "local", storeSpec("Kubernetes", "local", "")),
	)
	es := externalSecret(ns, "found", "SecretStore", "local", nil)
	es.Spec.RefreshInterval = &metav1.Duration{Duration: time.Second}
	es.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{{Find: &esv1.ExternalSecretFind{Name: &esv1.FindName{RegExp: "^app-"}}}}
	create(t, es)
	before := waitSecretData(t, ns, "found", map[string]string{"app-db": `{"password":"pw"}`})

	// The tenant fills its namespace: with app-db and the target, one more
	// Secret than a find looks at.
	work := make(chan int)
	errs := make(chan error, plugin.MaxFindListed)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := env.Client.Create(ctx, plainSecret(ns, fmt.Sprintf("filler-%04d", i), map[string]string{"k": "v"})); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range plugin.MaxFindListed - 1 {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	msg := waitReady(t, es, metav1.ConditionFalse, esv1.ReasonProviderError)
	if !strings.Contains(msg, fmt.Sprint(plugin.MaxFindListed)) {
		t.Errorf("condition message %q should name the bound", msg)
	}
	untouched(t, before)
}
