// Package generators is the contract between eso's core and its generators:
// kinds that produce values (passwords, UUIDs, short-lived cloud tokens,
// dynamic database credentials) instead of reading them. The same interface
// is served in process and, in provider mode, over gRPC.
package generators

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eso-dev/eso/providers"
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
	Generate(ctx context.Context, ref providers.Ref, scope providers.Scope) (map[string][]byte, State, error)
	// Cleanup revokes what Generate returned with state. Revoking what is
	// already gone is not an error.
	Cleanup(ctx context.Context, ref providers.Ref, scope providers.Scope, state State) error
	// Validate checks the configuration without generating anything.
	Validate(ctx context.Context, ref providers.Ref, scope providers.Scope) error
}

// Registration describes a compiled-in generator. It is pure data plus a
// constructor without side effects.
type Registration struct {
	// Name is the short name, e.g. "password".
	Name string
	// Kind is the configuration kind in provider.generator.external-secrets.io.
	Kind string
	// BuildTag is the catalog tag the wiring compiled the generator in with
	// (set by providers/register); empty means always compiled in.
	BuildTag string
	// AddToScheme registers the configuration kind.
	AddToScheme func(*runtime.Scheme) error
	// NewConfig returns an empty configuration object, for watches.
	NewConfig func() client.Object
	// New builds the generator.
	New func(providers.Deps) Generator
}

// Classed is a configuration kind that names the controller class allowed
// to generate with it (upstream's VaultDynamicSecret spec.controller),
// whether referenced directly or through a Generator or ClusterGenerator.
// An eso of another class leaves ExternalSecrets using it to that class, as
// it does for stores and Generators of another class.
type Classed interface {
	ControllerClass() string
}
