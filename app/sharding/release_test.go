package sharding

import (
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestForgetReleased(t *testing.T) {
	var a, b sync.Map
	kept, gone := types.NamespacedName{Namespace: "kept", Name: "x"}, types.NamespacedName{Namespace: "gone", Name: "x"}
	keptNS, goneNS := types.NamespacedName{Namespace: "kept"}, types.NamespacedName{Namespace: "gone"}
	keptParent, goneParent := types.NamespacedName{Name: "kept"}, types.NamespacedName{Name: "gone"}
	for _, m := range []*sync.Map{&a, &b} {
		for _, k := range []types.NamespacedName{kept, gone, keptNS, goneNS, keptParent, goneParent} {
			m.Store(k, 1)
		}
	}
	ForgetReleased(func(key string) bool { return key == "kept" || key == "/kept" }, &a, &b)
	for name, m := range map[string]*sync.Map{"a": &a, "b": &b} {
		for _, k := range []types.NamespacedName{kept, keptNS, keptParent} {
			if _, ok := m.Load(k); !ok {
				t.Errorf("%s lost the entry %v, still worked", name, k)
			}
		}
		for _, k := range []types.NamespacedName{gone, goneNS, goneParent} {
			if _, ok := m.Load(k); ok {
				t.Errorf("%s kept the entry %v, given up", name, k)
			}
		}
	}
}
