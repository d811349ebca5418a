package externalsecret

import (
	"errors"
	"maps"
	"strings"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/secrettemplate"
)

func re(src, tgt string) esv1.ExternalSecretRewrite {
	return esv1.ExternalSecretRewrite{Regexp: &esv1.ExternalSecretRewriteRegexp{Source: src, Target: tgt}}
}

func tr(tpl string) esv1.ExternalSecretRewrite {
	return esv1.ExternalSecretRewrite{Transform: &esv1.ExternalSecretRewriteTransform{Template: tpl}}
}

func mg(m esv1.ExternalSecretRewriteMerge) esv1.ExternalSecretRewrite {
	return esv1.ExternalSecretRewrite{Merge: &m}
}

func asStrings(m map[string][]byte) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

func bytesMap(m map[string]string) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

func TestRewriteKeys(t *testing.T) {
	cases := []struct {
		rules []esv1.ExternalSecretRewrite
		in    string
		want  string
	}{
		{nil, "db-user", "db-user"},
		{[]esv1.ExternalSecretRewrite{re("^db-", "")}, "db-user", "user"},
		{[]esv1.ExternalSecretRewrite{re(`^(\w+)/(\w+)$`, "${2}_${1}")}, "app/key", "key_app"},
		{[]esv1.ExternalSecretRewrite{re("^db-", ""), tr(`{{ .value | upper }}`)}, "db-user", "USER"},
		{[]esv1.ExternalSecretRewrite{tr(`{{ trimPrefix "prod/" .value | replace "/" "." }}`)}, "prod/a/b", "a.b"},
	}
	for _, tc := range cases {
		got, err := rewrite(secrettemplate.NewBudget(), tc.rules, bytesMap(map[string]string{tc.in: "v"}))
		if err != nil || len(got) != 1 || string(got[tc.want]) != "v" {
			t.Errorf("rewrite %q = %q, %v; want key %q", tc.in, asStrings(got), err, tc.want)
		}
	}
	// A rule that does not compile fails whatever the keys (only an edit
	// fixes it); one that fails on the keys it met may pass on others.
	for name, tc := range map[string]struct {
		rules   []esv1.ExternalSecretRewrite
		invalid bool
	}{
		"bad regexp":       {[]esv1.ExternalSecretRewrite{re("(", "")}, true},
		"bad template":     {[]esv1.ExternalSecretRewrite{tr("{{ .value ")}, true},
		"unknown function": {[]esv1.ExternalSecretRewrite{tr(`{{ env "HOME" }}`)}, true},
		"empty result":     {[]esv1.ExternalSecretRewrite{re(".*", "")}, false},
		"collision":        {[]esv1.ExternalSecretRewrite{re("^[ab]$", "same")}, false},
	} {
		_, err := rewrite(secrettemplate.NewBudget(), tc.rules, bytesMap(map[string]string{"a": "1", "b": "2"}))
		if !errors.Is(err, errBadRewrite) {
			t.Errorf("%s: error %v, want errBadRewrite", name, err)
		}
		if errors.Is(err, errInvalidRewrite) != tc.invalid {
			t.Errorf("%s: error %v: errInvalidRewrite is %v, want %v", name, err, !tc.invalid, tc.invalid)
		}
	}
}

func TestRewriteMerge(t *testing.T) {
	in := bytesMap(map[string]string{
		"base":     `{"host":"db","port":5432,"user":"app"}`,
		"override": `{"user":"admin","tls":{"enabled":true}}`,
		"extra":    `{"pool":10}`,
	})
	cases := []struct {
		name string
		m    esv1.ExternalSecretRewriteMerge
		want map[string]string
		bad  bool
	}{
		{"conflict fails by default", esv1.ExternalSecretRewriteMerge{}, nil, true},
		{"conflict ignored: later name wins", esv1.ExternalSecretRewriteMerge{ConflictPolicy: "Ignore"},
			map[string]string{"host": "db", "port": "5432", "user": "admin", "tls": `{"enabled":true}`, "pool": "10"}, false},
		{"priority resolves the conflict", esv1.ExternalSecretRewriteMerge{Priority: []string{"base"}},
			map[string]string{"host": "db", "port": "5432", "user": "app", "tls": `{"enabled":true}`, "pool": "10"}, false},
		{"highest priority first", esv1.ExternalSecretRewriteMerge{Priority: []string{"override", "base"}},
			map[string]string{"host": "db", "port": "5432", "user": "admin", "tls": `{"enabled":true}`, "pool": "10"}, false},
		{"strict priority on an absent key", esv1.ExternalSecretRewriteMerge{Priority: []string{"nope"}, ConflictPolicy: "Ignore"}, nil, true},
		{"absent priority key ignored", esv1.ExternalSecretRewriteMerge{Priority: []string{"nope", "base"}, PriorityPolicy: "IgnoreNotFound"},
			map[string]string{"host": "db", "port": "5432", "user": "app", "tls": `{"enabled":true}`, "pool": "10"}, false},
		{"JSON strategy", esv1.ExternalSecretRewriteMerge{Priority: []string{"base"}, Strategy: "JSON", Into: "config"},
			map[string]string{"config": `{"host":"db","pool":10,"port":5432,"tls":{"enabled":true},"user":"app"}`}, false},
	}
	for _, tc := range cases {
		got, err := rewrite(secrettemplate.NewBudget(), []esv1.ExternalSecretRewrite{mg(tc.m)}, in)
		if tc.bad {
			if !errors.Is(err, errBadRewrite) {
				t.Errorf("%s: error %v, want errBadRewrite", tc.name, err)
			}
			continue
		}
		if err != nil || !maps.Equal(asStrings(got), tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, asStrings(got), err, tc.want)
		}
	}
	if _, err := rewrite(secrettemplate.NewBudget(), []esv1.ExternalSecretRewrite{mg(esv1.ExternalSecretRewriteMerge{})}, bytesMap(map[string]string{"a": "not json"})); !errors.Is(err, errBadRewrite) {
		t.Errorf("non-object value: %v", err)
	}
}

// TestTransformOutputIsBounded: a key transform goes through the same bounded
// renderer as target templates.
func TestTransformOutputIsBounded(t *testing.T) {
	rule := esv1.ExternalSecretRewrite{Transform: &esv1.ExternalSecretRewriteTransform{Template: `{{ repeat 300 (repeat 4096 "x") }}`}}
	_, err := rewrite(secrettemplate.NewBudget(), []esv1.ExternalSecretRewrite{rule}, bytesMap(map[string]string{"a": "1"}))
	if !errors.Is(err, errBadRewrite) || !strings.Contains(err.Error(), "renders more than") {
		t.Fatalf("a 1.2 MB key: %v", err)
	}
}
