package plugin

import (
	"context"
	"encoding/json"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// State is what a generator needs to revoke what it generated, as JSON (e.g.
// {"leaseID": "..."}). It is stored in a GeneratorState, so it must never
// hold the generated value itself. nil means there is nothing to revoke.
type State json.RawMessage

// Generator produces values for one generator kind.
type Generator interface {
	// Kind is the API kind of the generator's configuration, e.g. "Password".
	Kind() string
	// Generate reads the configuration ref names and produces new values,
	// resolving any credentials in scope.Namespace only.
	Generate(ctx context.Context, ref Ref, scope Scope) (map[string][]byte, State, error)
	// Cleanup revokes what Generate returned with state. Revoking what is
	// already gone is not an error.
	Cleanup(ctx context.Context, ref Ref, scope Scope, state State) error
	// Validate checks the configuration without generating anything.
	Validate(ctx context.Context, ref Ref, scope Scope) error
}

// ConfigGenerator is implemented by in-process generators: they also
// generate from a configuration in hand instead of one read by ref, e.g.
// the configuration an upstream generator object translates to.
type ConfigGenerator interface {
	GenerateFromConfig(ctx context.Context, cfg client.Object, scope Scope) (map[string][]byte, State, error)
	CleanupFromConfig(ctx context.Context, cfg client.Object, scope Scope, state State) error
	ValidateConfig(ctx context.Context, cfg client.Object, scope Scope) error
}

// Classed is a configuration kind that names the controller class allowed
// to generate with it (upstream's VaultDynamicSecret spec.controller),
// whether referenced directly or through a Generator or ClusterGenerator.
// An eso of another class leaves ExternalSecrets using it to that class, as
// it does for stores and Generators of another class.
type Classed interface {
	ControllerClass() string
}
