package password

import (
	"errors"
	"strings"
	"testing"
	"unicode"

	"k8s.io/utils/ptr"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/providers"
)

func count(s string, in func(rune) bool) int {
	n := 0
	for _, r := range s {
		if in(r) {
			n++
		}
	}
	return n
}

func TestGenerateFollowsTheSpec(t *testing.T) {
	cases := []struct {
		name            string
		spec            genv1.PasswordSpec
		digits, symbols int
	}{
		{"defaults: a quarter digits, a quarter symbols", genv1.PasswordSpec{Length: 24}, 6, 6},
		{"explicit counts", genv1.PasswordSpec{Length: 40, Digits: ptr.To(10), Symbols: ptr.To(2), AllowRepeat: true}, 10, 2},
		{"letters only, no upper case", genv1.PasswordSpec{Length: 20, Digits: ptr.To(0), Symbols: ptr.To(0), NoUpper: true}, 0, 0},
		{"own symbols", genv1.PasswordSpec{Length: 12, Digits: ptr.To(0), Symbols: ptr.To(3), SymbolCharacters: ptr.To("-_.")}, 0, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			symbols := genv1.DefaultSymbolCharacters
			if tc.spec.SymbolCharacters != nil {
				symbols = *tc.spec.SymbolCharacters
			}
			for range 20 {
				p, err := Generate(tc.spec)
				if err != nil {
					t.Fatal(err)
				}
				if len(p) != tc.spec.Length {
					t.Fatalf("length %d, want %d", len(p), tc.spec.Length)
				}
				if n := count(p, unicode.IsDigit); n != tc.digits {
					t.Fatalf("%d digits, want %d", n, tc.digits)
				}
				if n := count(p, func(r rune) bool { return strings.ContainsRune(symbols, r) }); n != tc.symbols {
					t.Fatalf("%d symbols, want %d", n, tc.symbols)
				}
				if tc.spec.NoUpper && count(p, unicode.IsUpper) > 0 {
					t.Fatal("upper-case letter despite noUpper")
				}
			}
		})
	}
	a, _ := Generate(genv1.PasswordSpec{Length: 32})
	b, _ := Generate(genv1.PasswordSpec{Length: 32})
	if a == b {
		t.Fatal("two passwords are equal")
	}
}

// TestImpossibleSpecIsAConfigError covers what the schema cannot: the error
// describes the spec and is an invalid-configuration error.
func TestImpossibleSpecIsAConfigError(t *testing.T) {
	_, err := Generate(genv1.PasswordSpec{Length: 8, Digits: ptr.To(20), Symbols: ptr.To(0), AllowRepeat: true})
	if !errors.Is(err, providers.ErrInvalidConfig) || !strings.Contains(err.Error(), "length 8 with 20 digits") {
		t.Fatalf("error = %v", err)
	}
}
