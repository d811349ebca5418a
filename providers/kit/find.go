package kit

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

// NameRegexp compiles find.name.regexp; nil when the find has no name.
func NameRegexp(find esv1.ExternalSecretFind) (*regexp.Regexp, error) {
	if find.Name == nil {
		return nil, nil
	}
	re, err := regexp.Compile(find.Name.RegExp)
	if err != nil {
		return nil, fmt.Errorf("%w: find.name.regexp: %v", plugin.ErrInvalidConfig, err)
	}
	return re, nil
}

// NameMatcher returns the part of a find that looks at names: the path prefix
// and the name regexp. Providers add their own tag matching.
func NameMatcher(find esv1.ExternalSecretFind) (func(name string) bool, error) {
	re, err := NameRegexp(find)
	if err != nil {
		return nil, err
	}
	return func(name string) bool {
		if find.Path != nil && !strings.HasPrefix(name, *find.Path) {
			return false
		}
		return re == nil || re.MatchString(name)
	}, nil
}

// HasTags reports whether have carries every tag of want.
func HasTags(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// ReadFound reads the secret name a find selected into out with read: one
// gone since it was listed is left out, the rest count against budget.
func ReadFound(ctx context.Context, out map[string][]byte, name string, read func(ctx context.Context, key, version string) ([]byte, error), budget *FindBudget) error {
	v, err := read(ctx, name, "")
	if errors.Is(err, plugin.ErrSecretNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := budget.Result(v); err != nil {
		return fmt.Errorf("find: %w", err)
	}
	out[name] = v
	return nil
}
