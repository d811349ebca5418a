// Package password generates random passwords with github.com/sethvargo/go-password.
package password

import (
	"context"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	gopassword "github.com/sethvargo/go-password/password"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// Kind is the configuration kind this generator serves.
const Kind = "Password"

// Registration wires the generator into the binary; it is always compiled
// in. A password has no state: there is nothing to revoke.
var Registration = plugin.Definition[*genv1.Password]{
	Name: "password", Kind: Kind,
	// A configuration is valid when passwords can be made of it (it costs
	// microseconds).
	Check: func(cfg *genv1.Password) error {
		_, err := Values(cfg.Spec)
		return err
	},
	Generate: func(_ context.Context, _ plugin.Deps, cfg *genv1.Password, _ plugin.Scope) (map[string][]byte, plugin.State, error) {
		values, err := Values(cfg.Spec)
		if err != nil {
			return nil, nil, err
		}
		return values, nil, nil
	},
}.Registration()

// Values makes what spec describes, as upstream: one password for each key
// (secretKeys, else secretKey, else "password"), each drawn on its own and
// then encoded. Errors describe the spec, never a value.
func Values(spec genv1.PasswordSpec) (map[string][]byte, error) {
	keys, err := secretKeys(spec)
	if err != nil {
		return nil, err
	}
	values := make(map[string][]byte, len(keys))
	for _, key := range keys {
		value, err := Generate(spec)
		if err != nil {
			return nil, err
		}
		if values[key], err = encode(spec.Encoding, value); err != nil {
			return nil, err
		}
	}
	return values, nil
}

// Generate makes one password as spec describes, before encoding. Errors
// describe the spec, never a value.
func Generate(spec genv1.PasswordSpec) (string, error) {
	digits, symbols := spec.Length/4, spec.Length/4
	if spec.Digits != nil {
		digits = *spec.Digits
	}
	if spec.Symbols != nil {
		symbols = *spec.Symbols
	}
	symbolChars := genv1.DefaultSymbolCharacters
	if spec.SymbolCharacters != nil {
		symbolChars = *spec.SymbolCharacters
	}
	gen, err := gopassword.NewGenerator(&gopassword.GeneratorInput{Symbols: symbolChars})
	if err != nil {
		return "", fmt.Errorf("%w: %w", plugin.ErrInvalidConfig, err)
	}
	value, err := gen.Generate(spec.Length, digits, symbols, spec.NoUpper, spec.AllowRepeat)
	if err != nil {
		return "", fmt.Errorf("%w: length %d with %d digits and %d symbols: %w", plugin.ErrInvalidConfig, spec.Length, digits, symbols, err)
	}
	return value, nil
}

// secretKeys are the output keys. The schema refuses what is an error here;
// this guards objects stored before it did.
func secretKeys(spec genv1.PasswordSpec) ([]string, error) {
	switch {
	case len(spec.SecretKeys) > 0 && spec.SecretKey != "":
		return nil, fmt.Errorf("%w: set secretKey or secretKeys, not both", plugin.ErrInvalidConfig)
	case len(spec.SecretKeys) > 0:
		seen := make(map[string]bool, len(spec.SecretKeys))
		for _, k := range spec.SecretKeys {
			if k == "" || seen[k] {
				return nil, fmt.Errorf("%w: secretKeys must be non-empty and unique", plugin.ErrInvalidConfig)
			}
			seen[k] = true
		}
		return spec.SecretKeys, nil
	case spec.SecretKey != "":
		return []string{spec.SecretKey}, nil
	default:
		return []string{"password"}, nil
	}
}

// encode writes a password in encoding, as upstream: padded base64, base64url
// and base32, lower-case hex.
func encode(encoding genv1.PasswordEncoding, value string) ([]byte, error) {
	switch encoding {
	case "", genv1.PasswordEncodingRaw:
		return []byte(value), nil
	case genv1.PasswordEncodingBase64:
		return []byte(base64.StdEncoding.EncodeToString([]byte(value))), nil
	case genv1.PasswordEncodingBase64URL:
		return []byte(base64.URLEncoding.EncodeToString([]byte(value))), nil
	case genv1.PasswordEncodingBase32:
		return []byte(base32.StdEncoding.EncodeToString([]byte(value))), nil
	case genv1.PasswordEncodingHex:
		return []byte(hex.EncodeToString([]byte(value))), nil
	default:
		return nil, fmt.Errorf("%w: encoding %q (want raw, base64, base64url, base32 or hex)", plugin.ErrInvalidConfig, encoding)
	}
}
