package sharding

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestWriteGuard(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &Coordinator{cfg: Config{RenewDeadline: 10 * time.Second}, now: func() time.Time { return now }}
	passed := 0
	rt := c.WriteGuard(roundTripper(func(*http.Request) (*http.Response, error) {
		passed++
		return &http.Response{StatusCode: 200}, nil
	}))
	send := func(method, path string) bool {
		before := passed
		_, err := rt.RoundTrip(httptest.NewRequest(method, "https://api"+path, nil))
		return err == nil && passed == before+1
	}
	secret := "/api/v1/namespaces/tenant/secrets/db"
	lease := "/apis/coordination.k8s.io/v1/namespaces/eso-system/leases/eso-core"
	review := "/apis/authentication.k8s.io/v1/tokenreviews"
	tests := []struct {
		name                           string
		wrote, fenced                  bool
		since                          time.Duration
		get, put, patch, lease, review bool
	}{
		{"before the first renewal", false, false, 0, true, false, false, true, true},
		{"renewed", true, false, 9 * time.Second, true, true, true, true, true},
		{"past the renew deadline, watchdog not yet run", true, false, 10 * time.Second, true, false, false, true, true},
		{"fenced", true, true, time.Second, true, false, false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.wrote, c.fenced, c.renewedAt = tt.wrote, tt.fenced, now.Add(-tt.since)
			for _, check := range []struct {
				what string
				got  bool
				want bool
			}{
				{"GET a Secret", send(http.MethodGet, secret), tt.get},
				{"PUT a Secret", send(http.MethodPut, secret), tt.put},
				{"PATCH a Secret", send(http.MethodPatch, secret), tt.patch},
				{"PUT a Lease", send(http.MethodPut, lease), tt.lease},
				{"POST a TokenReview", send(http.MethodPost, review), tt.review},
			} {
				if check.got != check.want {
					t.Errorf("%s passed: %v, want %v", check.what, check.got, check.want)
				}
			}
		})
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
