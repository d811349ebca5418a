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

// BatchFind is a find over a store that lists names page by page and reads
// values in batches (AWS Secrets Manager, Parameter Store): every page is
// counted against the find's budget as it is listed, every value as it is
// read.
type BatchFind struct {
	// Prefix is the configuration's prefix: names start with it, keys
	// (what find.name matches and the result holds) do not.
	Prefix string
	// Batch is the most names one Read takes.
	Batch int
	// NextPage lists the next page: how many names it looked at, those
	// that pass the provider's own filters, and whether more pages follow.
	NextPage func(ctx context.Context) (listed int, names []string, more bool, err error)
	// Read reads a batch of names, returning each value under its name.
	Read func(ctx context.Context, names []string) (map[string][]byte, error)
}

// Run lists every page, keeps the names whose key find.name matches, and
// reads them: the found values by key.
func (f BatchFind) Run(ctx context.Context, find esv1.ExternalSecretFind) (map[string][]byte, error) {
	re, err := NameRegexp(find)
	if err != nil {
		return nil, err
	}
	var budget FindBudget
	var names []string
	for more := true; more; {
		var listed int
		var page []string
		if listed, page, more, err = f.NextPage(ctx); err != nil {
			return nil, err
		}
		if err := budget.Listed(listed); err != nil {
			return nil, fmt.Errorf("find: %w", err)
		}
		for _, name := range page {
			if re == nil || re.MatchString(strings.TrimPrefix(name, f.Prefix)) {
				names = append(names, name)
			}
		}
	}
	out := make(map[string][]byte, len(names))
	for start := 0; start < len(names); start += f.Batch {
		values, err := f.Read(ctx, names[start:min(start+f.Batch, len(names))])
		if err != nil {
			return nil, err
		}
		for name, value := range values {
			if err := budget.Result(value); err != nil {
				return nil, fmt.Errorf("find: %w", err)
			}
			out[strings.TrimPrefix(name, f.Prefix)] = value
		}
	}
	return out, nil
}
