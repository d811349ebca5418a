// Package uuid generates random (version 4) UUIDs.
package uuid

import (
	"context"

	googleuuid "github.com/google/uuid"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// Kind is the configuration kind this generator serves.
const Kind = "UUID"

// Registration wires the generator into the binary; it is always compiled
// in. A UUID has no state: there is nothing to revoke.
var Registration = plugin.Definition[*genv1.UUID]{
	Name: "uuid", Kind: Kind,
	Generate: func(_ context.Context, _ plugin.Deps, cfg *genv1.UUID, _ plugin.Scope) (map[string][]byte, plugin.State, error) {
		key := cfg.Spec.SecretKey
		if key == "" {
			key = "uuid"
		}
		id, err := googleuuid.NewRandom()
		if err != nil {
			return nil, nil, err
		}
		return map[string][]byte{key: []byte(id.String())}, nil, nil
	},
}.Registration()
