// Package conformance is one set of cases every provider must pass, through
// any path: in process, through eso's gRPC server and client on loopback, or
// against a provider process already running somewhere. A provider's tests
// describe it as a Subject and call Run; the cases never know which path
// they are on, so a remote provider is held to exactly what an in-process one
// is.
package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

// Subject is one provider configuration under test.
type Subject struct {
	// Provider serves Ref; Scope is where its credentials resolve.
	Provider plugin.Provider
	Ref      plugin.Ref
	Scope    plugin.Scope
	// Seed stores a secret in the backend behind the provider, as someone
	// other than eso would (unmarked): a JSON object of string fields. Nil
	// when the operator stored the keys beforehand (a provider process
	// running elsewhere; README.md lists them).
	Seed func(t testing.TB, key string, fields map[string]string)
	// Key turns a case's key into one the backend accepts (e.g. a path
	// prefix); nil keeps it.
	Key func(string) string
	// Writes says the provider writes (PushSecret and friends). The write
	// cases run exactly then, so a client reporting the wrong Capabilities
	// fails the suite instead of skipping them.
	Writes bool
	// Adopts says a push with Adopt takes over a seeded (unmarked) secret
	// (Fake's seeded secrets are its configuration's inline keys, which
	// nothing takes over).
	Adopts bool
	// PropertyIgnored says a push naming a property stores its value as
	// is under the key, as upstream's Fake provider does (Fake only); every
	// other provider sets that one field and keeps the others.
	PropertyIgnored bool
}

func (s Subject) key(k string) string {
	if s.Key == nil {
		return k
	}
	return s.Key(k)
}

func (s Subject) client(t *testing.T) plugin.SecretsClient {
	t.Helper()
	c, err := s.Provider.NewClient(context.Background(), s.Ref, s.Scope)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

var dbFields = map[string]string{"user": "app", "password": "s3cr3t"}

// Run runs every case against s.
func Run(t *testing.T, s Subject) {
	ctx := context.Background()
	db, findA, findB, foreign := s.key("conf-db"), s.key("conf-find-a"), s.key("conf-find-b"), s.key("conf-foreign")
	if s.Seed != nil {
		s.Seed(t, db, dbFields)
		s.Seed(t, findA, map[string]string{"v": "a"})
		s.Seed(t, findB, map[string]string{"v": "b"})
		s.Seed(t, foreign, map[string]string{"owner": "someone-else"})
	}
	c := s.client(t)

	t.Run("Validate", func(t *testing.T) {
		if err := s.Provider.Validate(ctx, s.Ref, s.Scope); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("GetSecret property", func(t *testing.T) {
		got, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: db, Property: "password"})
		if err != nil || string(got) != "s3cr3t" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("GetSecret whole secret", func(t *testing.T) {
		got, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: db})
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]string
		if err := json.Unmarshal(got, &fields); err != nil || !maps.Equal(fields, dbFields) {
			t.Fatalf("got %q (%v), want the JSON of %v", got, err, dbFields)
		}
	})
	t.Run("GetSecretMap", func(t *testing.T) {
		got, err := c.GetSecretMap(ctx, esv1.ExternalSecretDataRemoteRef{Key: db})
		if err != nil || len(got) != 2 || string(got["user"]) != "app" || string(got["password"]) != "s3cr3t" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("missing secret", func(t *testing.T) {
		_, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: s.key("conf-missing")})
		if !errors.Is(err, plugin.ErrSecretNotFound) || errors.Is(err, plugin.ErrPropertyNotFound) {
			t.Fatalf("err = %v, want ErrSecretNotFound", err)
		}
	})
	t.Run("missing property", func(t *testing.T) {
		_, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: db, Property: "nope"})
		if !errors.Is(err, plugin.ErrPropertyNotFound) {
			t.Fatalf("err = %v, want ErrPropertyNotFound", err)
		}
	})
	t.Run("errors never carry values", func(t *testing.T) {
		// Each of these fails after the provider has read conf-db; the
		// error may name keys and properties, never what it read.
		for _, ref := range []esv1.ExternalSecretDataRemoteRef{
			{Key: db, Property: "nope"},
			{Key: db, Property: "password.deeper"},
			{Key: db, Property: "user.password"},
			{Key: db, Version: "no-such-version"},
		} {
			if got, err := c.GetSecret(ctx, ref); err != nil {
				noValueIn(t, err, dbFields["password"])
			} else if ref.Version == "" {
				t.Errorf("GetSecret(%+v) = %q, want an error", ref, got)
			}
		}
	})
	t.Run("GetAllSecrets by name", func(t *testing.T) {
		got, err := c.GetAllSecrets(ctx, esv1.ExternalSecretFind{Name: &esv1.FindName{RegExp: "conf-find-"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("found %v, want the two conf-find- secrets", slices.Collect(maps.Keys(got)))
		}
		var values []string
		for _, v := range got {
			var fields map[string]string
			if err := json.Unmarshal(v, &fields); err != nil {
				t.Fatalf("a found value is not the secret's JSON: %v", err)
			}
			values = append(values, fields["v"])
		}
		if slices.Sort(values); !slices.Equal(values, []string{"a", "b"}) {
			t.Fatalf("found values %v, want those of conf-find-a and conf-find-b", values)
		}
	})
	t.Run("Capabilities", func(t *testing.T) {
		w, writes := c.(plugin.Writer)
		switch caps := c.Capabilities(); {
		case s.Writes != (caps == plugin.ReadWrite):
			t.Fatalf("Capabilities %s, but the provider %s", caps, map[bool]string{true: "writes", false: "does not write"}[s.Writes])
		case caps == plugin.ReadWrite && !writes:
			t.Fatalf("Capabilities %s but the client has no write side", caps)
		case caps == plugin.ReadOnly && writes:
			// Adapters (the gRPC client, core's wrappers) forward the write
			// side whatever the provider behind them can do: then every
			// write must be refused, not half done.
			refusedWrites(t, w, db)
		}
	})
	w, ok := c.(plugin.Writer)
	if !s.Writes || !ok {
		return
	}
	t.Run("push, exists, read, delete", func(t *testing.T) {
		key := s.key("conf-pushed")
		if err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: key, Value: []byte(`{"token":"t1"}`)}); err != nil {
			t.Fatal(err)
		}
		if ok, err := w.SecretExists(ctx, key); err != nil || !ok {
			t.Fatalf("SecretExists after push = %v, %v", ok, err)
		}
		if got, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: key, Property: "token"}); err != nil || string(got) != "t1" {
			t.Fatalf("read back %q, %v", got, err)
		}
		if err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: key, Property: "second", Value: []byte("t2")}); err != nil {
			t.Fatal(err)
		}
		if s.PropertyIgnored {
			if got, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: key}); err != nil || string(got) != "t2" {
				t.Fatalf("a property push must store the value as is: %q, %v", got, err)
			}
		} else if got, err := c.GetSecretMap(ctx, esv1.ExternalSecretDataRemoteRef{Key: key}); err != nil || string(got["token"]) != "t1" || string(got["second"]) != "t2" {
			t.Fatalf("a property push must keep the other fields: %q, %v", got, err)
		}
		if err := w.DeleteSecret(ctx, key, ""); err != nil {
			t.Fatal(err)
		}
		if ok, err := w.SecretExists(ctx, key); err != nil || ok {
			t.Fatalf("SecretExists after delete = %v, %v", ok, err)
		}
	})
	t.Run("never touches a secret eso did not create", func(t *testing.T) {
		pushed := `{"owner":"pushed-c4n4ry-value"}`
		err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: foreign, Value: []byte(pushed)})
		if !errors.Is(err, plugin.ErrNotManaged) {
			t.Fatalf("push over a foreign secret: %v, want ErrNotManaged", err)
		}
		noValueIn(t, err, "pushed-c4n4ry-value", "someone-else")
		if err := w.DeleteSecret(ctx, foreign, ""); !errors.Is(err, plugin.ErrNotManaged) {
			t.Fatalf("delete of a foreign secret: %v, want ErrNotManaged", err)
		}
		if got, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: foreign, Property: "owner"}); err != nil || string(got) != "someone-else" {
			t.Fatalf("the foreign secret changed: %q, %v", got, err)
		}
	})
	if s.Seed != nil && s.Adopts {
		t.Run("adopts a secret eso did not create when asked", func(t *testing.T) {
			key := s.key("conf-adoptable")
			s.Seed(t, key, map[string]string{"owner": "someone-else"})
			c := s.client(t) // one that sees the seeded secret (Fake's clients are snapshots)
			w := c.(plugin.Writer)
			err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: key, Value: []byte(`{"owner":"eso"}`), Adopt: true})
			if err != nil {
				t.Fatalf("adopting push: %v", err)
			}
			if got, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: key, Property: "owner"}); err != nil || string(got) != "eso" {
				t.Fatalf("read back %q, %v", got, err)
			}
			// Adopted, it is eso's: pushed again without Adopt, and deleted.
			if err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: key, Value: []byte(`{"owner":"eso-again"}`)}); err != nil {
				t.Fatalf("a push over an adopted secret: %v", err)
			}
			if err := w.DeleteSecret(ctx, key, ""); err != nil {
				t.Fatalf("deleting an adopted secret: %v", err)
			}
		})
	}
}

// refusedWrites checks that a read-only client's write side refuses every
// call with ErrNotSupported.
func refusedWrites(t *testing.T, w plugin.Writer, key string) {
	t.Helper()
	ctx := context.Background()
	if err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: key, Value: []byte(`{"user":"eso"}`)}); !errors.Is(err, plugin.ErrNotSupported) {
		t.Errorf("PushSecret on a ReadOnly client: %v, want ErrNotSupported", err)
	}
	if err := w.DeleteSecret(ctx, key, ""); !errors.Is(err, plugin.ErrNotSupported) {
		t.Errorf("DeleteSecret on a ReadOnly client: %v, want ErrNotSupported", err)
	}
	if _, err := w.SecretExists(ctx, key); !errors.Is(err, plugin.ErrNotSupported) {
		t.Errorf("SecretExists on a ReadOnly client: %v, want ErrNotSupported", err)
	}
}

// noValueIn fails t when err's message holds any of values: errors end up
// in conditions, events and logs, which more people read than the secret.
func noValueIn(t *testing.T, err error, values ...string) {
	t.Helper()
	for _, v := range values {
		if strings.Contains(err.Error(), v) {
			t.Errorf("error %q holds a secret value", err)
		}
	}
}
