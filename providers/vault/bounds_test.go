package vault

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
)

// oversizedVault answers the KV v2 API as a tenant's server might: data/fits
// is a secret just under the response bound, data/big one past it,
// data/endless a chunked body that does not end. The filler is "x", so an
// error holding the value would show a run of x.
func oversizedVault(t *testing.T) (url string, endlessDone <-chan struct{}) {
	t.Helper()
	done := make(chan struct{})
	var once sync.Once
	kv := func(value int) string {
		return fmt.Sprintf(`{"data":{"data":{"v":%q},"metadata":{"version":1}}}`, strings.Repeat("x", value))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/secret/data/fits":
			_, _ = w.Write([]byte(kv(plugin.MaxResponseBytes - 1024)))
		case "/v1/secret/data/big":
			_, _ = w.Write([]byte(kv(plugin.MaxResponseBytes)))
		case "/v1/secret/data/endless":
			defer once.Do(func() { close(done) })
			vaulttest.WriteEndlessSecret(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, done
}

// TestResponsesAreBounded: no Vault response is read past
// plugin.MaxResponseBytes, for the provider's client and for the
// session the VaultDynamicSecret generator uses. Over the bound is
// ErrTooLarge (a NotSupported: core shows a ProviderError) naming the
// bound, never the value.
func TestResponsesAreBounded(t *testing.T) {
	// Without the bound the endless answer is read until this runs out.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url, endlessDone := oversizedVault(t)
	spec := provv1.VaultSpec{Server: url, Path: "secret", Version: "v2", Auth: tokenAuth()}
	c, err := newClient(t, spec, map[string]string{"token": "t"})
	if err != nil {
		t.Fatal(err)
	}

	if v, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "fits", Property: "v"}); err != nil || len(v) != plugin.MaxResponseBytes-1024 {
		t.Fatalf("a secret under the bound: %d bytes, %v", len(v), err)
	}
	for _, key := range []string{"big", "endless"} {
		_, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: key})
		if !errors.Is(err, plugin.ErrTooLarge) || !errors.Is(err, plugin.ErrNotSupported) {
			t.Errorf("%s: %v, want ErrTooLarge", key, err)
			continue
		}
		if !strings.Contains(err.Error(), "2 MiB") || strings.Contains(err.Error(), "xxx") {
			t.Errorf("%s: %q should name the bound and hold no value", key, err)
		}
	}
	select {
	case <-endlessDone: // the endless answer was abandoned, not read to the end
	case <-ctx.Done():
		t.Fatal("the endless answer is still being read")
	}

	// The generator's session: same client construction, same bound.
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "vault-creds"}, Data: map[string][]byte{"token": []byte("t")}}
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(creds).Build()
	s, err := NewSession(ctx, plugin.Deps{Client: kube, APIReader: kube}, &spec, "team")
	if err != nil {
		t.Fatal(err)
	}
	api, err := s.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.Logical().ReadWithContext(ctx, "secret/data/big"); !errors.Is(err, plugin.ErrTooLarge) {
		t.Errorf("generator session read: %v, want ErrTooLarge", err)
	}
}

// TestFindIsBounded runs finds over trees written to a real Vault: a find
// errors (rather than returning part of the tree) past the depth, the names
// listed, the secrets returned or their bytes, and succeeds right at them.
func TestFindIsBounded(t *testing.T) {
	ctx := context.Background()
	root := vaulttest.Start(t)
	c, err := newClient(t, provv1.VaultSpec{Server: root.Address(), Path: "secret", Version: "v2", Auth: tokenAuth()}, map[string]string{"token": vaulttest.RootToken})
	if err != nil {
		t.Fatal(err)
	}
	writeAll := func(paths []string, value string) {
		t.Helper()
		work := make(chan string)
		errs := make(chan error, len(paths))
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for p := range work {
					if _, err := root.Logical().Write("secret/data/"+p, map[string]any{"data": map[string]any{"v": value}}); err != nil {
						errs <- err
					}
				}
			}()
		}
		for _, p := range paths {
			work <- p
		}
		close(work)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	chain := func(prefix string, levels int) string {
		parts := []string{prefix}
		for i := range levels {
			parts = append(parts, fmt.Sprint("l", i+1))
		}
		return strings.Join(append(parts, "key"), "/")
	}
	numbered := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s/k%04d", prefix, i)
		}
		return out
	}
	writeAll([]string{chain("deep", plugin.MaxFindDepth), chain("deeper", plugin.MaxFindDepth+1)}, "v")
	writeAll(numbered("listed", plugin.MaxFindListed), "v")
	writeAll(numbered("wide", plugin.MaxFindListed+1), "v")
	writeAll(numbered("many", plugin.MaxFindResults+1), "v")
	big := strings.Repeat("x", 900<<10)
	writeAll(numbered("heavy", plugin.MaxFindBytes/len(big)+1), big)

	find := func(path string, name string) (map[string][]byte, error) {
		f := esv1.ExternalSecretFind{Path: &path}
		if name != "" {
			f.Name = &esv1.FindName{RegExp: name}
		}
		return c.GetAllSecrets(ctx, f)
	}
	if got, err := find("deep", ""); err != nil || len(got) != 1 {
		t.Errorf("a secret %d folders down: %d found, %v", plugin.MaxFindDepth, len(got), err)
	}
	// Only names the regexp keeps are returned: 1,000 listed, 2 returned.
	if got, err := find("listed", "k000[01]$"); err != nil || len(got) != 2 {
		t.Errorf("%d names listed: %d found, %v", plugin.MaxFindListed, len(got), err)
	}
	for _, tc := range []struct{ path, name, says string }{
		{"deeper", "", "folder levels"},
		{"wide", "k0000$", "names"},
		{"many", "", "secrets"},
		{"heavy", "", "4 MiB"},
	} {
		got, err := find(tc.path, tc.name)
		if !errors.Is(err, plugin.ErrTooLarge) || got != nil {
			t.Errorf("find under %s: %d found, %v; want ErrTooLarge and nothing", tc.path, len(got), err)
			continue
		}
		if !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "xxx") {
			t.Errorf("find under %s: %q should say what bound (%s) and hold no value", tc.path, err, tc.says)
		}
	}
}
