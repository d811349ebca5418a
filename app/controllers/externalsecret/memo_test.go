package externalsecret

import (
	"context"
	"errors"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

type jsonStub struct {
	plugin.SecretsClient
	calls int
}

func (s *jsonStub) GetSecret(_ context.Context, ref esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	s.calls++
	if ref.Property != "" {
		return nil, errors.New("the memo must ask for whole secrets")
	}
	if ref.Key == "missing" {
		return nil, plugin.ErrSecretNotFound
	}
	return []byte(`{"user":"app","password":"pw","nested":{"a":"b"}}`), nil
}

func (s *jsonStub) PropertiesAreJSONPaths() {}

func TestMemoReadsEachSecretOnce(t *testing.T) {
	ctx := context.Background()
	stub := &jsonStub{}
	c := memoize(stub)
	for _, p := range []string{"user", "password", "nested.a", ""} {
		if _, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db", Property: p}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := c.GetSecretMap(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"})
	if err != nil || string(m["user"]) != "app" {
		t.Fatalf("GetSecretMap = %q, %v", m, err)
	}
	if _, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "absent"}); !errors.Is(err, plugin.ErrPropertyNotFound) {
		t.Errorf("absent property: %v", err)
	}
	if stub.calls != 1 {
		t.Errorf("provider calls = %d, want 1 for one remote secret", stub.calls)
	}
	for range 2 {
		if _, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "missing", Property: "x"}); !errors.Is(err, plugin.ErrSecretNotFound) {
			t.Errorf("missing secret: %v", err)
		}
	}
	if stub.calls != 2 {
		t.Errorf("provider calls = %d, want 2: errors are remembered too", stub.calls)
	}
	if _, ok := memoize(&stubPlain{}).(*memoClient); ok {
		t.Error("a client without JSON properties must not be memoized")
	}
}

type stubPlain struct{ plugin.SecretsClient }
