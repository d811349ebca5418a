package stores

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// TestFoundReady: only a store's first check finding it Ready counts;
// every other change of its Ready condition or spec, or a store recreated
// under the name, requeues all its users.
func TestFoundReady(t *testing.T) {
	store := func(uid string, generation int64, status metav1.ConditionStatus, observed int64) *ssv2.SecretStore {
		s := &ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "store", UID: types.UID(uid), Generation: generation}}
		if status != "" {
			s.Status.Conditions = []metav1.Condition{{Type: ssv2.ConditionReady, Status: status, ObservedGeneration: observed}}
		}
		return s
	}
	cases := map[string]struct {
		old, new *ssv2.SecretStore
		want     bool
	}{
		"a first check finds it Ready":           {old: store("a", 1, "", 0), new: store("a", 1, metav1.ConditionTrue, 1), want: true},
		"the store was recreated under the name": {old: store("a", 1, "", 0), new: store("b", 1, metav1.ConditionTrue, 1)},
		"a later spec is found Ready":            {old: store("a", 2, metav1.ConditionTrue, 1), new: store("a", 2, metav1.ConditionTrue, 2)},
		"a False of an older spec ends":          {old: store("a", 2, metav1.ConditionFalse, 1), new: store("a", 2, metav1.ConditionTrue, 2)},
		"a first check finds it not Ready":       {old: store("a", 1, "", 0), new: store("a", 1, metav1.ConditionFalse, 1)},
		"it turns Ready again":                   {old: store("a", 1, metav1.ConditionFalse, 1), new: store("a", 1, metav1.ConditionTrue, 1)},
		"it stops being Ready":                   {old: store("a", 1, metav1.ConditionTrue, 1), new: store("a", 1, metav1.ConditionFalse, 1)},
		"its spec changed":                       {old: store("a", 1, metav1.ConditionTrue, 1), new: store("a", 2, metav1.ConditionTrue, 1)},
		"its spec changed as it was found Ready": {old: store("a", 1, "", 0), new: store("a", 2, metav1.ConditionTrue, 2)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := V2APIs[0].FoundReady(tc.old, tc.new); got != tc.want {
				t.Errorf("FoundReady = %v, want %v", got, tc.want)
			}
		})
	}
}
