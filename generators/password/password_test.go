package password

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"unicode"

	"k8s.io/utils/ptr"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
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
	if !errors.Is(err, plugin.ErrInvalidConfig) || !strings.Contains(err.Error(), "length 8 with 20 digits") {
		t.Fatalf("error = %v", err)
	}
}

// TestValuesOnePasswordPerKey: secretKeys gives each key its own password,
// secretKey or "password" one.
func TestValuesOnePasswordPerKey(t *testing.T) {
	cases := []struct {
		name string
		spec genv1.PasswordSpec
		keys []string
	}{
		{"default key", genv1.PasswordSpec{Length: 16}, []string{"password"}},
		{"secretKey", genv1.PasswordSpec{Length: 16, SecretKey: "pw"}, []string{"pw"}},
		{"secretKeys", genv1.PasswordSpec{Length: 16, SecretKeys: []string{"a", "b", "c"}}, []string{"a", "b", "c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			values, err := Values(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if len(values) != len(tc.keys) {
				t.Fatalf("keys %v, want %v", values, tc.keys)
			}
			seen := map[string]bool{}
			for _, k := range tc.keys {
				v, ok := values[k]
				if !ok || len(v) != tc.spec.Length {
					t.Fatalf("key %q: %d bytes, present %v", k, len(v), ok)
				}
				if seen[string(v)] {
					t.Fatal("two keys got the same password")
				}
				seen[string(v)] = true
			}
		})
	}
}

// TestValuesEncoding: each encoding decodes back to a password of the
// spec's length and kind, as upstream encodes (padded, lower-case hex).
func TestValuesEncoding(t *testing.T) {
	decoders := map[genv1.PasswordEncoding]func(string) ([]byte, error){
		"":                              func(s string) ([]byte, error) { return []byte(s), nil },
		genv1.PasswordEncodingRaw:       func(s string) ([]byte, error) { return []byte(s), nil },
		genv1.PasswordEncodingBase64:    base64.StdEncoding.DecodeString,
		genv1.PasswordEncodingBase64URL: base64.URLEncoding.DecodeString,
		genv1.PasswordEncodingBase32:    base32.StdEncoding.DecodeString,
		genv1.PasswordEncodingHex:       hex.DecodeString,
	}
	for enc, decode := range decoders {
		t.Run(string(enc), func(t *testing.T) {
			spec := genv1.PasswordSpec{Length: 20, Digits: ptr.To(5), Symbols: ptr.To(0), Encoding: enc, SecretKeys: []string{"a", "b"}}
			values, err := Values(spec)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range values {
				raw, err := decode(string(v))
				if err != nil {
					t.Fatalf("%s: %q is not %s: %v", k, v, enc, err)
				}
				if len(raw) != 20 || count(string(raw), unicode.IsDigit) != 5 {
					t.Fatalf("%s: decoded %q, want 20 characters with 5 digits", k, raw)
				}
			}
		})
	}
	v, _ := Values(genv1.PasswordSpec{Length: 32, Encoding: genv1.PasswordEncodingHex})
	if s := string(v["password"]); s != strings.ToLower(s) || len(s) != 64 {
		t.Fatalf("hex = %q, want 64 lower-case digits", s)
	}
}

// TestValuesRefusesWhatTheSchemaRefuses covers objects stored before the
// schema refused them: the error is an invalid configuration.
func TestValuesRefusesWhatTheSchemaRefuses(t *testing.T) {
	for name, spec := range map[string]genv1.PasswordSpec{
		"duplicate keys":     {Length: 8, SecretKeys: []string{"a", "a"}},
		"empty key":          {Length: 8, SecretKeys: []string{""}},
		"both key fields":    {Length: 8, SecretKey: "a", SecretKeys: []string{"b"}},
		"unknown encoding":   {Length: 8, Encoding: "rot13"},
		"impossible lengths": {Length: 8, Digits: ptr.To(20), AllowRepeat: true},
	} {
		if _, err := Values(spec); !errors.Is(err, plugin.ErrInvalidConfig) {
			t.Errorf("%s: error = %v", name, err)
		}
	}
}
