package secretmanager

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

// TestFaults: when Secret Manager fails, reads return an error naming the
// secret and what happened, never empty data and never a value.
func TestFaults(t *testing.T) {
	ctx := context.Background()
	srv, c := newClient(t)
	srv.Add("projects/p/secrets/db", []byte(`{"password":"s3cr3t-value"}`), map[string]string{"env": "prod"})

	for _, tc := range []struct {
		code codes.Code
		is   error
	}{
		{codes.Unavailable, nil},
		{codes.ResourceExhausted, nil},
		{codes.Internal, nil},
		{codes.Unauthenticated, plugin.ErrAuthFailed},
		{codes.PermissionDenied, plugin.ErrOutOfScope},
	} {
		t.Run(tc.code.String(), func(t *testing.T) {
			srv.FailNext(100, tc.code)
			defer srv.FailNext(0, codes.OK)
			reads := map[string]func() (any, error){
				"GetSecret": func() (any, error) {
					return c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db", Property: "password"})
				},
				"GetSecretMap": func() (any, error) { return c.GetSecretMap(ctx, esv1.ExternalSecretDataRemoteRef{Key: "db"}) },
				"GetAllSecrets": func() (any, error) {
					return c.GetAllSecrets(ctx, esv1.ExternalSecretFind{Tags: map[string]string{"env": "prod"}})
				},
			}
			for name, read := range reads {
				data, err := read()
				if err == nil {
					t.Errorf("%s returned %v and no error", name, data)
					continue
				}
				if errors.Is(err, plugin.ErrSecretNotFound) {
					t.Errorf("%s: an outage must not look like a missing secret: %v", name, err)
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("%s: %v, want %v", name, err, tc.is)
				}
				msg := err.Error()
				if !strings.Contains(msg, "injected failure") || strings.Contains(msg, "s3cr3t") {
					t.Errorf("%s: unreadable or leaking error %q", name, msg)
				}
				if name != "GetAllSecrets" && !strings.Contains(msg, `"db"`) {
					t.Errorf("%s: error does not name the secret: %q", name, msg)
				}
			}
		})
	}
}

// TestRetries: a read survives a dropped connection or two (Unavailable),
// but throttling and longer outages go back to the caller at once instead
// of being retried for a minute.
func TestRetries(t *testing.T) {
	ctx := context.Background()
	srv, c := newClient(t)
	srv.Add("projects/p/secrets/db", []byte("pw"), nil)
	ref := esv1.ExternalSecretDataRemoteRef{Key: "db"}

	srv.FailNext(2, codes.Unavailable)
	if v, err := c.GetSecret(ctx, ref); err != nil || string(v) != "pw" {
		t.Errorf("after two dropped connections: %q, %v", v, err)
	}
	before := srv.CallCount("AccessSecretVersion")
	srv.FailNext(1, codes.ResourceExhausted)
	if _, err := c.GetSecret(ctx, ref); err == nil {
		t.Error("throttled read succeeded")
	}
	if n := srv.CallCount("AccessSecretVersion") - before; n != 1 {
		t.Errorf("throttled read tried %d times, want 1", n)
	}
	srv.FailNext(10, codes.Unavailable)
	if _, err := c.GetSecret(ctx, ref); err == nil {
		t.Error("read during an outage succeeded")
	}
	if n := srv.CallCount("AccessSecretVersion") - before; n != 1+1+readRetries {
		t.Errorf("%d attempts during an outage, want %d", n-1, 1+readRetries)
	}
	srv.FailNext(0, codes.OK)
	if v, err := c.GetSecret(ctx, ref); err != nil || string(v) != "pw" {
		t.Errorf("after recovery: %q, %v", v, err)
	}
}
