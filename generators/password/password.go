// Package password generates random passwords with github.com/sethvargo/go-password.
package password

import (
	"context"
	"fmt"

	gopassword "github.com/sethvargo/go-password/password"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/generators"
	"github.com/eso-dev/eso/providers"
	"github.com/eso-dev/eso/providers/kit"
)

// Kind is the configuration kind this generator serves.
const Kind = "Password"

// Registration wires the generator into the binary; it is always compiled
// in. A password has no state: there is nothing to revoke.
var Registration = kit.GeneratorDefinition[*genv1.Password]{
	Name:        "password",
	Kind:        Kind,
	AddToScheme: genv1.AddToScheme,
	NewConfig:   func() *genv1.Password { return &genv1.Password{} },
	// A configuration is valid when a password can be made of it (it costs
	// microseconds).
	Check: func(cfg *genv1.Password) error {
		_, err := Generate(cfg.Spec)
		return err
	},
	Generate: func(_ context.Context, _ providers.Deps, cfg *genv1.Password, _ providers.Scope) (map[string][]byte, generators.State, error) {
		value, err := Generate(cfg.Spec)
		if err != nil {
			return nil, nil, err
		}
		return map[string][]byte{secretKey(cfg.Spec): []byte(value)}, nil, nil
	},
}.Registration()

// Generate makes one password as spec describes. Errors describe the spec,
// never a value.
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
		return "", fmt.Errorf("%w: %w", providers.ErrInvalidConfig, err)
	}
	value, err := gen.Generate(spec.Length, digits, symbols, spec.NoUpper, spec.AllowRepeat)
	if err != nil {
		return "", fmt.Errorf("%w: length %d with %d digits and %d symbols: %w", providers.ErrInvalidConfig, spec.Length, digits, symbols, err)
	}
	return value, nil
}

func secretKey(spec genv1.PasswordSpec) string {
	if spec.SecretKey == "" {
		return "password"
	}
	return spec.SecretKey
}
