package externalsecret

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// errBadRewrite: a rewrite rule cannot be applied as written.
var errBadRewrite = errors.New("invalid rewrite")

// rewriteKey applies a dataFrom entry's rewrites to one key, in order.
func rewriteKey(rules []esv1.ExternalSecretRewrite, key string) (string, error) {
	for i, rule := range rules {
		switch {
		case rule.Regexp != nil:
			re, err := regexp.Compile(rule.Regexp.Source)
			if err != nil {
				return "", fmt.Errorf("%w: rewrite[%d].regexp.source: %v", errBadRewrite, i, err)
			}
			key = re.ReplaceAllString(key, rule.Regexp.Target)
		case rule.Transform != nil:
			tpl, err := template.New("rewrite").Funcs(keyFuncs).Option("missingkey=error").Parse(rule.Transform.Template)
			if err != nil {
				return "", fmt.Errorf("%w: rewrite[%d].transform.template: %v", errBadRewrite, i, err)
			}
			var b strings.Builder
			if err := tpl.Execute(&b, map[string]string{"value": key}); err != nil {
				return "", fmt.Errorf("%w: rewrite[%d].transform.template: %v", errBadRewrite, i, err)
			}
			key = b.String()
		}
	}
	if key == "" {
		return "", fmt.Errorf("%w: a rewrite produced an empty key", errBadRewrite)
	}
	return key, nil
}

// keyFuncs are the functions key transforms may use: string functions only.
var keyFuncs = template.FuncMap{
	"upper":      strings.ToUpper,
	"lower":      strings.ToLower,
	"title":      func(s string) string { return strings.ToUpper(s[:min(1, len(s))]) + s[min(1, len(s)):] },
	"trim":       strings.TrimSpace,
	"trimPrefix": func(prefix, s string) string { return strings.TrimPrefix(s, prefix) },
	"trimSuffix": func(suffix, s string) string { return strings.TrimSuffix(s, suffix) },
	"replace":    func(old, replacement, s string) string { return strings.ReplaceAll(s, old, replacement) },
}
