// Package binary is what the running eso binary was built with, as its
// command line needs it: the compiled-in plugins and the v1 store layer
// (none in builds with the tag nov1). main, the composition root, passes it
// (from app/wiring), so the commands link no provider of their own and
// resolve stores as eso itself does.
package binary

import (
	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// Build is the binary's plugins and v1 store layer.
type Build struct {
	Plugins []plugin.Registration
	V1Layer fx.Option
}

// Parts are what a command reads objects and resolves stores with.
type Parts struct {
	Index  *plugin.Index
	Scheme *runtime.Scheme
	// StoreAPIs are the v1 store kinds, for stores.Resolver.WithAPIs.
	StoreAPIs []stores.API
}

// v1Parts are what the v1 store layer adds.
type v1Parts struct {
	fx.In
	Schemes []func(*runtime.Scheme) error `group:"scheme"`
	APIs    []stores.API                  `group:"storeapis"`
}

// Parts builds the index and scheme of b, collecting the v1 store layer's
// scheme and store kinds through the same module eso composes.
func (b Build) Parts() (Parts, error) {
	index, err := plugin.NewIndex(b.Plugins)
	if err != nil {
		return Parts{}, err
	}
	var v1 v1Parts
	layer := b.V1Layer
	if layer == nil {
		layer = fx.Options()
	}
	app := fx.New(layer, fx.WithLogger(func() fxevent.Logger { return fxevent.NopLogger }),
		fx.Invoke(func(p v1Parts) { v1 = p }))
	if err := app.Err(); err != nil {
		return Parts{}, err
	}
	scheme, err := manager.NewScheme(index, manager.SchemeAdders{Adders: v1.Schemes})
	if err != nil {
		return Parts{}, err
	}
	return Parts{Index: index, Scheme: scheme, StoreAPIs: v1.APIs}, nil
}
