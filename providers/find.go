package providers

import (
	"fmt"
	"regexp"
	"strings"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// NameMatcher returns the part of a find that looks at names: the path prefix
// and the name regexp. Providers add their own tag matching.
func NameMatcher(find esv1.ExternalSecretFind) (func(name string) bool, error) {
	var re *regexp.Regexp
	if find.Name != nil {
		var err error
		if re, err = regexp.Compile(find.Name.RegExp); err != nil {
			return nil, fmt.Errorf("%w: find.name.regexp: %v", ErrInvalidConfig, err)
		}
	}
	return func(name string) bool {
		if find.Path != nil && !strings.HasPrefix(name, *find.Path) {
			return false
		}
		return re == nil || re.MatchString(name)
	}, nil
}
