package externalsecret

import (
	"errors"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

func TestRewriteKey(t *testing.T) {
	re := func(src, tgt string) esv1.ExternalSecretRewrite {
		return esv1.ExternalSecretRewrite{Regexp: &esv1.ExternalSecretRewriteRegexp{Source: src, Target: tgt}}
	}
	tr := func(tpl string) esv1.ExternalSecretRewrite {
		return esv1.ExternalSecretRewrite{Transform: &esv1.ExternalSecretRewriteTransform{Template: tpl}}
	}
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
		got, err := rewriteKey(tc.rules, tc.in)
		if err != nil || got != tc.want {
			t.Errorf("rewrite %q = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for name, rules := range map[string][]esv1.ExternalSecretRewrite{
		"bad regexp":       {re("(", "")},
		"bad template":     {tr("{{ .value ")},
		"unknown function": {tr(`{{ env "HOME" }}`)},
		"empty result":     {re(".*", "")},
	} {
		if _, err := rewriteKey(rules, "key"); !errors.Is(err, errBadRewrite) {
			t.Errorf("%s: error %v, want errBadRewrite", name, err)
		}
	}
}
