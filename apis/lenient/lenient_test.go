package lenient_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/apis/lenient"
)

func TestOneUndecodableObjectDoesNotFailItsList(t *testing.T) {
	list := `{"items":[
	  {"metadata":{"name":"bad","namespace":"a"},"spec":{"refreshInterval":"banana"},
	   "status":{"conditions":[{"type":"Ready","status":"True","reason":"SecretSynced","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}},
	  {"metadata":{"name":"good","namespace":"b"},"spec":{"refreshInterval":"1h"}}]}`
	var got esv1.ExternalSecretList
	if err := json.Unmarshal([]byte(list), &got); err != nil {
		t.Fatalf("the list failed: %v", err)
	}
	bad, good := &got.Items[0], &got.Items[1]
	err := lenient.Error(bad)
	if !errors.Is(err, lenient.ErrUndecodable) || !strings.Contains(err.Error(), "banana") {
		t.Errorf("bad: Error = %v", err)
	}
	if bad.Name != "bad" || bad.Namespace != "a" || bad.Spec.RefreshInterval != nil || len(bad.Status.Conditions) != 1 {
		t.Errorf("bad decoded as %+v: want its metadata and status, no spec", bad)
	}
	if lenient.Error(good) != nil || good.Spec.RefreshInterval.Duration.String() != "1h0m0s" {
		t.Errorf("good decoded as %+v, %v", good.Spec, lenient.Error(good))
	}
}
