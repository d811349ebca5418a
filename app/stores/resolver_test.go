package stores

import (
	"context"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers/fake"
	"github.com/eso-dev/eso/providers/plugin"
)

// configReads counts the reads of provider configurations.
type configReads struct {
	client.Client
	n atomic.Int32
}

func (c *configReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*provv1.Fake); ok {
		c.n.Add(1)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestOneConfigurationReadPerSync: a sync that fingerprints a store and
// builds its client (a login) reads the provider configuration once, and
// the client is built from what the fingerprint names.
func TestOneConfigurationReadPerSync(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{ssv2.AddToScheme, provv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := &configReads{Client: ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "cfg", UID: "cfg-uid", Generation: 1},
			Spec: provv1.FakeSpec{Data: []provv1.FakeSecret{{Key: "db", Value: "v1"}}}},
		&ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "s", UID: "s-uid", Generation: 1},
			Spec: ssv2.SecretStoreSpec{ProviderConfig: ssv2.ProviderConfig{ProviderRef: ssv2.ProviderRef{Kind: "Fake", Name: "cfg"}}}},
	).Build()}
	index, err := plugin.NewIndex([]plugin.Registration{fake.Registration})
	if err != nil {
		t.Fatal(err)
	}
	r := NewResolver(c, plugin.NewPlugins(index, plugin.Deps{Client: c, APIReader: c}), NewClientCache(), "")
	for sync, wantReads := range []int32{1, 1} { // the second sync reuses the client: its fingerprint read only
		s, err := r.Get(ctx, "team", esv1.SecretStoreRef{Name: "s"})
		if err != nil {
			t.Fatal(err)
		}
		c.n.Store(0)
		fp, err := r.Fingerprint(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		cl, release, err := r.Client(ctx, s, "team", fp)
		if err != nil {
			t.Fatal(err)
		}
		v, err := cl.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"})
		release()
		if err != nil || string(v) != "v1" {
			t.Fatalf("sync %d: %q, %v", sync, v, err)
		}
		if n := c.n.Load(); n != wantReads {
			t.Errorf("sync %d read the configuration %d times, want %d", sync, n, wantReads)
		}
	}
}
