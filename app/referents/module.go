package referents

import (
	"go.uber.org/fx"
	"k8s.io/client-go/metadata"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Module provides the Watcher and runs it with the manager. It watches
// metadata only: no Secret value is ever sent to it.
var Module = fx.Module("referents",
	fx.Provide(func(mgr ctrl.Manager) (*Watcher, error) {
		client, err := metadata.NewForConfig(mgr.GetConfig())
		if err != nil {
			return nil, err
		}
		w := New(client)
		return w, mgr.Add(w)
	}),
)
