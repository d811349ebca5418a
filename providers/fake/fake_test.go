package fake

import (
	"context"
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

func newProvider(t *testing.T, data ...provv1.FakeSecret) plugin.Provider {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := provv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cfg := &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "f"}, Spec: provv1.FakeSpec{Data: data}}
	c := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(cfg).Build()
	return Registration.NewProvider(plugin.Deps{Client: c, APIReader: c})
}

var ref = plugin.Ref{Kind: Kind, Namespace: "ns", Name: "f"}

func TestGetSecret(t *testing.T) {
	p := newProvider(t,
		provv1.FakeSecret{Key: "db", Value: `{"user":"u","password":"p"}`},
		provv1.FakeSecret{Key: "db", Version: "1", Value: `{"user":"old"}`},
	)
	c, err := p.NewClient(context.Background(), ref, plugin.Scope{Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ref  esv1.ExternalSecretDataRemoteRef
		want string
		err  error
	}{
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "password"}, "p", nil},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Version: "1", Property: "user"}, "old", nil},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Version: "2"}, "", plugin.ErrSecretNotFound},
		{esv1.ExternalSecretDataRemoteRef{Key: "nope"}, "", plugin.ErrSecretNotFound},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "nope"}, "", plugin.ErrPropertyNotFound},
	} {
		got, err := c.GetSecret(context.Background(), tc.ref)
		if !errors.Is(err, tc.err) || string(got) != tc.want {
			t.Errorf("GetSecret(%+v) = %q, %v; want %q, %v", tc.ref, got, err, tc.want, tc.err)
		}
	}
	m, err := c.GetSecretMap(context.Background(), esv1.ExternalSecretDataRemoteRef{Key: "db"})
	if err != nil || len(m) != 2 || string(m["user"]) != "u" {
		t.Errorf("GetSecretMap = %q, %v", m, err)
	}
}

func TestValidate(t *testing.T) {
	dup := newProvider(t, provv1.FakeSecret{Key: "k", Value: "1"}, provv1.FakeSecret{Key: "k", Value: "2"})
	if err := dup.Validate(context.Background(), ref, plugin.Scope{}); !errors.Is(err, plugin.ErrInvalidConfig) {
		t.Errorf("duplicate key: %v, want ErrInvalidConfig", err)
	}
	missing := plugin.Ref{Kind: Kind, Namespace: "ns", Name: "absent"}
	if err := dup.Validate(context.Background(), missing, plugin.Scope{}); !errors.Is(err, plugin.ErrConfigNotFound) {
		t.Errorf("missing configuration: %v, want ErrConfigNotFound", err)
	}
}

func TestGetAllSecrets(t *testing.T) {
	p := newProvider(t,
		provv1.FakeSecret{Key: "prod/db", Value: "1"},
		provv1.FakeSecret{Key: "prod/api", Value: "2"},
		provv1.FakeSecret{Key: "prod/db", Version: "old", Value: "0"},
		provv1.FakeSecret{Key: "dev/db", Value: "3"},
	)
	c, err := p.NewClient(context.Background(), ref, plugin.Scope{Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	path := "prod/"
	got, err := c.GetAllSecrets(context.Background(), esv1.ExternalSecretFind{Path: &path, Name: &esv1.FindName{RegExp: "db$"}})
	if err != nil || len(got) != 1 || string(got["prod/db"]) != "1" {
		t.Errorf("GetAllSecrets = %q, %v", got, err)
	}
	if _, err := c.GetAllSecrets(context.Background(), esv1.ExternalSecretFind{Tags: map[string]string{"a": "b"}}); !errors.Is(err, plugin.ErrNotSupported) {
		t.Errorf("tags: %v, want ErrNotSupported", err)
	}
	if _, err := c.GetAllSecrets(context.Background(), esv1.ExternalSecretFind{Name: &esv1.FindName{RegExp: "("}}); !errors.Is(err, plugin.ErrInvalidConfig) {
		t.Errorf("bad regexp: %v, want ErrInvalidConfig", err)
	}
}

// TestInlineKeysAreNeverAdopted: a Fake configuration's inline keys are
// its own; a push, adopting or not, never writes over them.
func TestInlineKeysAreNeverAdopted(t *testing.T) {
	c, err := newProvider(t, provv1.FakeSecret{Key: "inline", Value: "v"}).NewClient(context.Background(), ref, plugin.Scope{Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	w := c.(plugin.Writer)
	for _, adopt := range []bool{false, true} {
		if err := w.PushSecret(context.Background(), plugin.PushRequest{RemoteKey: "inline", Value: []byte("x"), Adopt: adopt}); !errors.Is(err, plugin.ErrNotManaged) {
			t.Errorf("push (adopt %v) over an inline key: %v, want ErrNotManaged", adopt, err)
		}
	}
	if got, err := c.GetSecret(context.Background(), esv1.ExternalSecretDataRemoteRef{Key: "inline"}); err != nil || string(got) != "v" {
		t.Errorf("the inline key reads %q, %v", got, err)
	}
}

// TestPushesAreBounded: a configuration holds at most maxPushedKeys pushed
// keys and maxPushedBytes; past them a push is too large, and nothing of it
// is kept.
func TestPushesAreBounded(t *testing.T) {
	c, err := newProvider(t).NewClient(context.Background(), ref, plugin.Scope{Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	w := c.(plugin.Writer)
	for i := range maxPushedKeys {
		if err := w.PushSecret(context.Background(), plugin.PushRequest{RemoteKey: fmt.Sprint("k", i), Value: []byte("v")}); err != nil {
			t.Fatalf("push %d below the bound: %v", i, err)
		}
	}
	if err := w.PushSecret(context.Background(), plugin.PushRequest{RemoteKey: "one-more", Value: []byte("v")}); !errors.Is(err, plugin.ErrTooLarge) {
		t.Fatalf("key %d: %v, want ErrTooLarge", maxPushedKeys+1, err)
	}
	big := make([]byte, maxPushedBytes)
	if err := w.PushSecret(context.Background(), plugin.PushRequest{RemoteKey: "k0", Value: big}); !errors.Is(err, plugin.ErrTooLarge) {
		t.Fatalf("a value past %d bytes: %v, want ErrTooLarge", maxPushedBytes, err)
	}
	if ok, _ := w.SecretExists(context.Background(), "one-more"); ok {
		t.Error("a refused push was kept")
	}
}

// TestAPropertyPushStoresTheValueAsIs: as upstream's Fake provider, a push
// naming a property stores the value as is under the remote key (no JSON
// object around it); the last push to a key wins, and deleting an entry
// with a property deletes the key.
func TestAPropertyPushStoresTheValueAsIs(t *testing.T) {
	ctx := context.Background()
	w := newBudget(t).config("ns", "f", "f-uid") // pushes of its own
	c := w.(plugin.SecretsClient)
	read := func() string {
		t.Helper()
		got, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "shared"})
		if err != nil {
			t.Fatal(err)
		}
		return string(got)
	}
	for _, push := range []struct{ property, value string }{{"field1", "v1"}, {"field2", "v2"}} {
		if err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "shared", Property: push.property, Value: []byte(push.value)}); err != nil {
			t.Fatal(err)
		}
		if got := read(); got != push.value {
			t.Errorf("after pushing property %s: the key reads %q, want %q", push.property, got, push.value)
		}
	}
	if err := w.DeleteSecret(ctx, "shared", "field1"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := w.SecretExists(ctx, "shared"); ok {
		t.Error("deleting an entry with a property left the key")
	}
}
