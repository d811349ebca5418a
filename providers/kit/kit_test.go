package kit

import (
	"context"
	"errors"
	"slices"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

func TestJSONValues(t *testing.T) {
	ctx := context.Background()
	values := map[string]string{"db": `{"user":"app","nested":{"port":5432}}`, "plain": "text"}
	j := JSONValues{
		Value: func(_ context.Context, key, version string) ([]byte, error) {
			v, ok := values[key]
			if !ok || version != "" {
				return nil, plugin.ErrSecretNotFound
			}
			return []byte(v), nil
		},
		Metadata: func(context.Context, string) (map[string]string, error) { return map[string]string{"team": "a"}, nil },
	}
	cases := []struct {
		ref     esv1.ExternalSecretDataRemoteRef
		want    string
		wantErr error
	}{
		{esv1.ExternalSecretDataRemoteRef{Key: "db"}, `{"user":"app","nested":{"port":5432}}`, nil},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "user"}, "app", nil},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "nested.port"}, "5432", nil},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "missing"}, "", plugin.ErrPropertyNotFound},
		{esv1.ExternalSecretDataRemoteRef{Key: "plain", Property: "x"}, "", plugin.ErrPropertyNotFound},
		{esv1.ExternalSecretDataRemoteRef{Key: "gone"}, "", plugin.ErrSecretNotFound},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", Version: "7"}, "", plugin.ErrSecretNotFound},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", MetadataPolicy: esv1.MetadataPolicyFetch}, `{"team":"a"}`, nil},
		{esv1.ExternalSecretDataRemoteRef{Key: "db", MetadataPolicy: esv1.MetadataPolicyFetch, Property: "team"}, "a", nil},
	}
	for _, tc := range cases {
		got, err := j.GetSecret(ctx, tc.ref)
		if !errors.Is(err, tc.wantErr) || string(got) != tc.want {
			t.Errorf("GetSecret(%+v) = %q, %v; want %q, %v", tc.ref, got, err, tc.want, tc.wantErr)
		}
	}
	fields, err := j.GetSecretMap(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"})
	if err != nil || string(fields["user"]) != "app" || string(fields["nested"]) != `{"port":5432}` {
		t.Errorf("GetSecretMap = %q, %v", fields, err)
	}
	if _, err := j.GetSecretMap(ctx, esv1.ExternalSecretDataRemoteRef{Key: "plain"}); err == nil {
		t.Error("GetSecretMap of a value that is not an object succeeded")
	}
	noMeta := JSONValues{Value: j.Value}
	if _, err := noMeta.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db", MetadataPolicy: esv1.MetadataPolicyFetch}); !errors.Is(err, plugin.ErrNotSupported) {
		t.Errorf("metadata from a backend without any = %v, want ErrNotSupported", err)
	}
}

// TestDeletion runs DeleteSecret's rules against a recording backend.
func TestDeletion(t *testing.T) {
	cases := []struct {
		name             string
		exists, managed  bool
		current, prop    string
		wantCalls        []string
		wantErr          error
		wantRewrittenNow string
	}{
		{name: "absent", wantCalls: []string{"state"}},
		{name: "not eso's", exists: true, wantCalls: []string{"state"}, wantErr: plugin.ErrNotManaged},
		{name: "whole secret", exists: true, managed: true, wantCalls: []string{"state", "delete"}},
		{name: "one of two properties", exists: true, managed: true, current: `{"a":"1","b":"2"}`, prop: "a",
			wantCalls: []string{"state", "current", "rewrite"}, wantRewrittenNow: `{"b":"2"}`},
		{name: "the last property", exists: true, managed: true, current: `{"a":"1"}`, prop: "a",
			wantCalls: []string{"state", "current", "delete"}},
		{name: "property already gone", exists: true, managed: true, current: `{"b":"2"}`, prop: "a",
			wantCalls: []string{"state", "current"}},
		{name: "not an object", exists: true, managed: true, current: `text`, prop: "a",
			wantCalls: []string{"state", "current"}, wantErr: plugin.ErrInvalidConfig},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls []string
			var rewritten string
			err := Deletion{
				Key: "k", Property: tc.prop,
				State: func(context.Context) (bool, bool, error) {
					calls = append(calls, "state")
					return tc.exists, tc.managed, nil
				},
				Current: func(context.Context) ([]byte, error) {
					calls = append(calls, "current")
					return []byte(tc.current), nil
				},
				Rewrite: func(_ context.Context, rest []byte) error {
					calls = append(calls, "rewrite")
					rewritten = string(rest)
					return nil
				},
				Delete: func(context.Context) error {
					calls = append(calls, "delete")
					return nil
				},
			}.Run(context.Background())
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("Run = %v, want %v", err, tc.wantErr)
			}
			if !slices.Equal(calls, tc.wantCalls) {
				t.Errorf("calls %v, want %v", calls, tc.wantCalls)
			}
			if rewritten != tc.wantRewrittenNow {
				t.Errorf("rewrote %q, want %q", rewritten, tc.wantRewrittenNow)
			}
		})
	}
}
