package kit

import (
	"errors"
	"testing"

	"github.com/eso-dev/eso/providers/plugin"
)

func TestDecodePushMetadata(t *testing.T) {
	type spec struct {
		Tags   map[string]string `json:"tags"`
		Labels map[string]string `json:"labels"`
	}
	for name, tc := range map[string]struct {
		raw  string
		want string
		ok   bool
	}{
		"upstream's document":             {`{"apiVersion":"kubernetes.external-secrets.io/v1alpha1","kind":"PushSecretMetadata","spec":{"tags":{"a":"b"}}}`, "b", true},
		"a bare spec":                     {`{"tags":{"a":"c"}}`, "c", true},
		"another kind":                    {`{"apiVersion":"v1","kind":"ConfigMap","spec":{}}`, "", false},
		"a field not applied":             {`{"tags":{},"replicationLocations":["eu-west-1"]}`, "", false},
		"a tag of eso's mark":             {`{"tags":{"a":"b","managed-by":"external-secrets"}}`, "b", false},
		"a label of eso's mark":           {`{"labels":{"managed-by":"someone"},"tags":{"a":"b"}}`, "b", false},
		"eso's mark before trailing data": {`{"tags":{"a":"b","managed-by":"external-secrets"}} {}`, "b", false},
	} {
		var s spec
		err := DecodePushMetadata([]byte(tc.raw), &s)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, plugin.ErrInvalidConfig)) || s.Tags["a"] != tc.want {
			t.Errorf("%s: tags %v, error %v", name, s.Tags, err)
		}
	}
}
