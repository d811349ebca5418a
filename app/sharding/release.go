package sharding

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// ForgetReleased deletes from each map (keyed by types.NamespacedName: an
// object's, or a namespace's alone) the entries works rejects: what a
// controller remembers per object or namespace, once the replica gave it
// up (Coordinator.OnRelease).
// Should the object come back, it starts from its status, as after a
// restart.
func ForgetReleased(works func(key string) bool, maps ...*sync.Map) {
	for _, m := range maps {
		m.Range(func(k, _ any) bool {
			if key, ok := k.(types.NamespacedName); ok && !works(Key(key.Namespace, key.Name)) {
				m.Delete(k)
			}
			return true
		})
	}
}
