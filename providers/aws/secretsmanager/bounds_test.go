package secretsmanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

// tenantEndpoint answers the Secrets Manager API as a server a tenant names
// in endpoint might: GetSecretValue of "big" is past the response bound;
// ListSecrets lists secrets of names "<prefix>-<n>" in pages of 100, and
// "endless/" names a list that never ends; BatchGetSecretValue answers
// every id with "v". The filler is "x", so an error holding the value
// would show a run of x.
func tenantEndpoint(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		_ = json.NewDecoder(r.Body).Decode(&in)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		var out any
		switch strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "secretsmanager.") {
		case "GetSecretValue":
			out = map[string]any{"Name": in["SecretId"], "SecretString": strings.Repeat("x", plugin.MaxResponseBytes)}
		case "ListSecrets":
			filter := in["Filters"].([]any)[0].(map[string]any)["Values"].([]any)[0].(string)
			prefix, total, _ := strings.Cut(filter, "/")
			n, _ := strconv.Atoi(total)
			start, _ := strconv.Atoi(fmt.Sprint(in["NextToken"]))
			var list []map[string]any
			for i := start; i < start+100 && (prefix == "endless" || i < n); i++ {
				list = append(list, map[string]any{"Name": fmt.Sprintf("%s/%s-%d", prefix, total, i)})
			}
			page := map[string]any{"SecretList": list}
			if next := start + len(list); prefix == "endless" || next < n {
				page["NextToken"] = strconv.Itoa(next)
			}
			out = page
		case "BatchGetSecretValue":
			var values []map[string]any
			for _, id := range in["SecretIdList"].([]any) {
				values = append(values, map[string]any{"Name": id, "SecretString": "v"})
			}
			out = map[string]any{"SecretValues": values}
		default:
			http.Error(w, `{"__type":"InvalidRequestException"}`, http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestTenantEndpointIsBounded: an answer past plugin.MaxResponseBytes is
// ErrTooLarge naming the bound, and a find stops at the names listed
// (also when the list never ends) and the secrets returned.
func TestTenantEndpointIsBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := newClient(t, staticSpec(tenantEndpoint(t)))

	_, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "big"})
	if !errors.Is(err, plugin.ErrTooLarge) || !strings.Contains(err.Error(), "2 MiB") || strings.Contains(err.Error(), "xxx") {
		t.Errorf("an oversized answer: %v, want ErrTooLarge naming 2 MiB and no value", err)
	}

	find := func(path string) (map[string][]byte, error) {
		return c.GetAllSecrets(ctx, esv1.ExternalSecretFind{Path: &path})
	}
	if got, err := find(fmt.Sprintf("at/%d", plugin.MaxFindResults)); err != nil || len(got) != plugin.MaxFindResults {
		t.Errorf("find of %d secrets: %d, %v", plugin.MaxFindResults, len(got), err)
	}
	for _, path := range []string{fmt.Sprintf("over/%d", plugin.MaxFindResults+1), "endless/"} {
		if got, err := find(path); !errors.Is(err, plugin.ErrTooLarge) || got != nil {
			t.Errorf("find under %s: %d found, %v; want ErrTooLarge", path, len(got), err)
		}
	}
}
