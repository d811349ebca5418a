// Package secretkeys renames and converts the keys of Secret data: the
// regexp and template rewrites, and the conversions that make any remote
// name a valid Secret key, and back. ExternalSecrets and PushSecrets share
// it, so a key means the same on the way in and on the way out.
package secretkeys

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/secrettemplate"
)

// ErrCollision: two keys became one.
var ErrCollision = errors.New("keys collide")

// Renamer returns the rename of one regexp or transform rule (nil renames
// nothing). A transform is a template whose executions, one per key, are
// charged to b, the sync's budget; .value is the key.
func Renamer(b *secrettemplate.Budget, re *esv1.ExternalSecretRewriteRegexp, tr *esv1.ExternalSecretRewriteTransform) (func(string) (string, error), error) {
	switch {
	case re != nil:
		compiled, err := regexp.Compile(re.Source)
		if err != nil {
			return nil, fmt.Errorf("regexp.source: %v", err)
		}
		return func(k string) (string, error) {
			// Every match may expand the target: charged before it is built.
			if err := b.Produce("rewrite regexp", int64(len(k))+int64(len(k)+1)*int64(len(re.Target))); err != nil {
				return "", err
			}
			return compiled.ReplaceAllString(k, re.Target), nil
		}, nil
	case tr != nil:
		tpl, err := secrettemplate.CompileWith(b, "transform.template", tr.Template)
		if err != nil {
			return nil, err
		}
		return func(k string) (string, error) { return tpl.Execute(map[string]string{"value": k}) }, nil
	}
	return nil, nil
}

// RenameAll renames every key of in, a step of b per key. A key renamed to
// nothing, or two keys renamed to one, is an error naming the keys (never a
// value).
func RenameAll(b *secrettemplate.Budget, rename func(string) (string, error), in map[string][]byte) (map[string][]byte, error) {
	if rename == nil {
		return in, nil
	}
	if err := b.Steps("renaming keys", len(in)); err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(in))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		nk, err := rename(k)
		if err != nil {
			return nil, err
		}
		if nk == "" {
			return nil, fmt.Errorf("key %q was renamed to an empty key", k)
		}
		if _, dup := out[nk]; dup {
			return nil, fmt.Errorf("%w: two keys were renamed to %q", ErrCollision, nk)
		}
		out[nk] = in[k]
	}
	return out, nil
}

// invalidKeyChar matches a character a Secret key may not hold.
var invalidKeyChar = regexp.MustCompile(`[^a-zA-Z0-9._-]`)

// Convert makes keys valid Secret keys, as upstream ESO does: Default
// replaces each invalid character by "_", Unicode by "_Uxxxx_" (its code
// point). Two keys converting to one is an error rather than a coin toss.
func Convert(strategy esv1.ConversionStrategy, in map[string][]byte) (map[string][]byte, error) {
	out := make(map[string][]byte, len(in))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		converted := invalidKeyChar.ReplaceAllStringFunc(k, func(c string) string {
			if strategy == esv1.ConversionUnicode {
				return fmt.Sprintf("_U%04x_", []rune(c)[0])
			}
			return "_"
		})
		if _, dup := out[converted]; dup {
			return nil, fmt.Errorf("%w: keys convert to the same Secret key %q (conversionStrategy %s)", ErrCollision, converted, strategy)
		}
		out[converted] = in[k]
	}
	return out, nil
}

// unicodeEscape is what Convert's Unicode strategy writes for a character.
var unicodeEscape = regexp.MustCompile(`_U([0-9a-fA-F]{4,6})_`)

// ReverseUnicode turns each "_Uxxxx_" of key back into its character: the
// inverse of Convert with the Unicode strategy.
func ReverseUnicode(key string) string {
	return unicodeEscape.ReplaceAllStringFunc(key, func(m string) string {
		cp, err := strconv.ParseUint(m[2:len(m)-1], 16, 32)
		if err != nil || cp > 0x10FFFF {
			return m
		}
		return string(rune(cp))
	})
}
