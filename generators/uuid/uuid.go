// Package uuid generates random (version 4) UUIDs.
package uuid

import (
	"context"

	googleuuid "github.com/google/uuid"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/generators"
	"github.com/eso-dev/eso/providers"
)

// Kind is the configuration kind this generator serves.
const Kind = "UUID"

// Registration wires the generator into the binary; it is always compiled in.
var Registration = generators.Registration{
	Name:        "uuid",
	Kind:        Kind,
	AddToScheme: func(s *runtime.Scheme) error { return genv1.AddToScheme(s) },
	NewConfig:   func() client.Object { return &genv1.UUID{} },
	New:         func(deps providers.Deps) generators.Generator { return &Generator{reader: deps.Client} },
}

// Generator generates UUIDs.
type Generator struct{ reader client.Reader }

// Kind implements generators.Generator.
func (g *Generator) Kind() string { return Kind }

// Generate implements generators.Generator. A UUID has no state.
func (g *Generator) Generate(ctx context.Context, ref providers.Ref, _ providers.Scope) (map[string][]byte, generators.State, error) {
	var cfg genv1.UUID
	if err := providers.ReadConfig(ctx, g.reader, ref, &cfg); err != nil {
		return nil, nil, err
	}
	key := cfg.Spec.SecretKey
	if key == "" {
		key = "uuid"
	}
	id, err := googleuuid.NewRandom()
	if err != nil {
		return nil, nil, err
	}
	return map[string][]byte{key: []byte(id.String())}, nil, nil
}

// Cleanup implements generators.Generator: nothing to revoke.
func (g *Generator) Cleanup(context.Context, providers.Ref, providers.Scope, generators.State) error {
	return nil
}

// Validate implements generators.Generator: the configuration exists.
func (g *Generator) Validate(ctx context.Context, ref providers.Ref, _ providers.Scope) error {
	return providers.ReadConfig(ctx, g.reader, ref, &genv1.UUID{})
}
