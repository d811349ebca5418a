package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

// TestFindIsBounded fills a namespace of a real API server the way a tenant
// can and checks that a find errors, rather than returning part of the
// namespace, past the names listed, the Secrets returned and their bytes;
// right at the bounds it succeeds.
func TestFindIsBounded(t *testing.T) {
	ctx := context.Background()
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting the API server (KUBEBUILDER_ASSETS): %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	kube, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	const ns = "tenant"
	if err := kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	createAll := func(secrets []*corev1.Secret) {
		t.Helper()
		work := make(chan *corev1.Secret)
		errs := make(chan error, len(secrets))
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for s := range work {
					if err := kube.Create(ctx, s); err != nil {
						errs <- err
					}
				}
			}()
		}
		for _, s := range secrets {
			work <- s
		}
		close(work)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	secret := func(name, group, value string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"group": group}},
			Data:       map[string][]byte{"v": []byte(value)},
		}
	}
	var fill []*corev1.Secret
	for i := range plugin.MaxFindListed {
		group := "rest"
		if i <= plugin.MaxFindResults {
			group = "many" // MaxFindResults+1 of them
		}
		fill = append(fill, secret(fmt.Sprintf("s%04d", i), group, "v"))
	}
	createAll(fill)

	// Secrets are held a page at a time, never the whole namespace at once.
	pages := &pageCounter{secretAPI: ownIdentity{reader: kube, writer: kube}}
	c := &Client{namespace: ns, api: pages}
	find := func(f esv1.ExternalSecretFind) (map[string][]byte, error) { return c.GetAllSecrets(ctx, f) }
	byName := func(re string) esv1.ExternalSecretFind {
		return esv1.ExternalSecretFind{Name: &esv1.FindName{RegExp: re}}
	}
	byGroup := func(g string) esv1.ExternalSecretFind {
		return esv1.ExternalSecretFind{Tags: map[string]string{"group": g}}
	}

	if got, err := find(byName("^s000[01]$")); err != nil || len(got) != 2 {
		t.Fatalf("%d Secrets listed, 2 returned: %d, %v", plugin.MaxFindListed, len(got), err)
	}
	if pages.largest > listPageSize {
		t.Errorf("a page held %d Secrets, want at most %d", pages.largest, listPageSize)
	}
	big := strings.Repeat("x", 900<<10)
	var heavy []*corev1.Secret
	for i := range plugin.MaxFindBytes/len(big) + 1 {
		heavy = append(heavy, secret(fmt.Sprintf("heavy%d", i), "heavy", big))
	}
	createAll(heavy)

	for _, tc := range []struct {
		name string
		find esv1.ExternalSecretFind
		says string
	}{
		{"more Secrets than may be listed", byName("^s0000$"), "names"},
		{"more Secrets than may be returned", byGroup("many"), "secrets"},
		{"more bytes than may be returned", byGroup("heavy"), "4 MiB"},
	} {
		got, err := find(tc.find)
		if !errors.Is(err, plugin.ErrTooLarge) || got != nil {
			t.Errorf("%s: %d found, %v; want ErrTooLarge and nothing", tc.name, len(got), err)
			continue
		}
		if !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "xxx") {
			t.Errorf("%s: %q should say what bound (%s) and hold no value", tc.name, err, tc.says)
		}
	}
}

// pageCounter records the largest page a secretAPI listed.
type pageCounter struct {
	secretAPI
	largest int
}

func (p *pageCounter) list(ctx context.Context, namespace string, selector labels.Selector, limit int64, token string) ([]corev1.Secret, string, error) {
	items, next, err := p.secretAPI.list(ctx, namespace, selector, limit, token)
	p.largest = max(p.largest, len(items))
	return items, next, err
}
