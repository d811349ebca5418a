// Package password generates random passwords with github.com/sethvargo/go-password.
package password

import (
	"context"
	"fmt"

	gopassword "github.com/sethvargo/go-password/password"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/generators"
	"github.com/eso-dev/eso/providers"
)

// Kind is the configuration kind this generator serves.
const Kind = "Password"

// Registration wires the generator into the binary; it is always compiled in.
var Registration = generators.Registration{
	Name:        "password",
	Kind:        Kind,
	AddToScheme: func(s *runtime.Scheme) error { return genv1.AddToScheme(s) },
	NewConfig:   func() client.Object { return &genv1.Password{} },
	New:         func(deps providers.Deps) generators.Generator { return &Generator{reader: deps.Client} },
}

// Generator generates passwords.
type Generator struct{ reader client.Reader }

// Kind implements generators.Generator.
func (g *Generator) Kind() string { return Kind }

// Generate implements generators.Generator. A password has no state: there is
// nothing to revoke.
func (g *Generator) Generate(ctx context.Context, ref providers.Ref, _ providers.Scope) (map[string][]byte, generators.State, error) {
	spec, err := g.read(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	value, err := Generate(spec)
	if err != nil {
		return nil, nil, err
	}
	return map[string][]byte{secretKey(spec): []byte(value)}, nil, nil
}

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

// Cleanup implements generators.Generator: nothing to revoke.
func (g *Generator) Cleanup(context.Context, providers.Ref, providers.Scope, generators.State) error {
	return nil
}

// Validate implements generators.Generator by generating one password and
// throwing it away: the schema rules cover the common mistakes, this the rest.
func (g *Generator) Validate(ctx context.Context, ref providers.Ref, _ providers.Scope) error {
	spec, err := g.read(ctx, ref)
	if err != nil {
		return err
	}
	_, err = Generate(spec)
	return err
}

func (g *Generator) read(ctx context.Context, ref providers.Ref) (genv1.PasswordSpec, error) {
	var cfg genv1.Password
	if err := providers.ReadConfig(ctx, g.reader, ref, &cfg); err != nil {
		return genv1.PasswordSpec{}, err
	}
	return cfg.Spec, nil
}

func secretKey(spec genv1.PasswordSpec) string {
	if spec.SecretKey == "" {
		return "password"
	}
	return spec.SecretKey
}
