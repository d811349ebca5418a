package parameterstore

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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/aws/awstest"
	"github.com/eso-dev/eso/providers/plugin"
)

// TestFindIsBounded runs finds against a server a tenant names in endpoint:
// DescribeParameters lists "/<group>/<n>" parameters under /at/<n>/ and
// /over/<n>/ in pages of 50, and under /endless/ without end;
// GetParameters answers every name with "v". A find stops at the names
// listed (also when the list never ends) and the parameters returned.
func TestFindIsBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		_ = json.NewDecoder(r.Body).Decode(&in)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		var out any
		switch strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSSM.") {
		case "DescribeParameters":
			path := in["ParameterFilters"].([]any)[0].(map[string]any)["Values"].([]any)[0].(string)
			n, _ := strconv.Atoi(path[strings.LastIndex(path, "/")+1:])
			start, _ := strconv.Atoi(fmt.Sprint(in["NextToken"]))
			var list []map[string]any
			for i := start; i < start+50 && (strings.HasPrefix(path, "/endless") || i < n); i++ {
				list = append(list, map[string]any{"Name": fmt.Sprintf("%s/%d", path, i)})
			}
			page := map[string]any{"Parameters": list}
			if next := start + len(list); strings.HasPrefix(path, "/endless") || next < n {
				page["NextToken"] = strconv.Itoa(next)
			}
			out = page
		case "GetParameters":
			var params []map[string]any
			for _, name := range in["Names"].([]any) {
				params = append(params, map[string]any{"Name": name, "Value": "v"})
			}
			out = map[string]any{"Parameters": params}
		default:
			http.Error(w, `{"__type":"InvalidRequestException"}`, http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kube := awstest.Kube(t, &provv1.AWSParameterStore{ObjectMeta: metav1.ObjectMeta{Name: "ps"}, Spec: provv1.AWSSpec{
		Region: "us-east-1", Endpoint: srv.URL, Auth: awstest.StaticAuth()}})
	p := Registration.NewProvider(plugin.Deps{Client: kube, APIReader: kube})
	c, err := p.NewClient(ctx, plugin.Ref{Kind: Kind, Namespace: awstest.Namespace, Name: "ps"}, plugin.Scope{Namespace: awstest.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	find := func(path string) (map[string][]byte, error) {
		return c.GetAllSecrets(ctx, esv1.ExternalSecretFind{Path: &path})
	}
	if got, err := find(fmt.Sprintf("/at/%d", plugin.MaxFindResults)); err != nil || len(got) != plugin.MaxFindResults {
		t.Errorf("find of %d parameters: %d, %v", plugin.MaxFindResults, len(got), err)
	}
	for _, path := range []string{fmt.Sprintf("/over/%d", plugin.MaxFindResults+1), "/endless/0"} {
		if got, err := find(path); !errors.Is(err, plugin.ErrTooLarge) || got != nil {
			t.Errorf("find under %s: %d found, %v; want ErrTooLarge", path, len(got), err)
		}
	}
}
