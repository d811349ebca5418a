package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
)

// convergeBound is how soon after its last referent arrives a dependent
// must be Ready: a watch's requeue, not a refresh (an hour here) or a
// restart.
const convergeBound = 10 * time.Second

// TestConvergesInAnyOrder creates an ExternalSecret first, lets it fail on
// its missing referent, then creates the referent: the ExternalSecret syncs
// within convergeBound, without a restart or an annotation. The objects of
// each case are created in the order listed, the ExternalSecret first.
func TestConvergesInAnyOrder(t *testing.T) {
	runEso(t, testConfig())
	for name, tc := range map[string]struct {
		es        func(ns string) *esv1.ExternalSecret
		referents func(ns string) []client.Object
		key       string
	}{
		"a Password referenced directly": {
			es: func(ns string) *esv1.ExternalSecret {
				return generatedSecret(ns, "app", esv1.GeneratorRef{Kind: "Password", Name: "pw"})
			},
			referents: func(ns string) []client.Object { return []client.Object{passwordConfig(ns, "pw", 16)} },
			key:       "password",
		},
		"a Generator, then its Password": {
			es: func(ns string) *esv1.ExternalSecret {
				return generatedSecret(ns, "app", esv1.GeneratorRef{Kind: "Generator", Name: "gen"})
			},
			referents: func(ns string) []client.Object {
				return []client.Object{
					&genv2.Generator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gen"}, Spec: genv2.GeneratorSpec{
						ProviderConfig: genv2.ProviderConfig{ProviderRef: genv2.ProviderRef{Kind: "Password", Name: "pw"}}}},
					passwordConfig(ns, "pw", 16),
				}
			},
			key: "password",
		},
		"a SecretStore, then its Fake configuration": {
			es: func(ns string) *esv1.ExternalSecret {
				return externalSecret(ns, "app", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "")})
			},
			referents: func(ns string) []client.Object {
				return []client.Object{secretStore(ns, "store", storeSpec("Fake", "fake", "")),
					fakeConfig(ns, "fake", map[string]string{"db": "s3cr3t"})}
			},
			key: "password",
		},
	} {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t, "order", nil)
			es := tc.es(ns)
			create(t, es)
			eventually(t, "the ExternalSecret to fail on its missing referent", func() error {
				if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(es), es); err != nil {
					return err
				}
				if c := readyCondition(es); c == nil || c.Status != metav1.ConditionFalse {
					return fmt.Errorf("Ready %+v", c)
				}
				return nil
			})
			for _, obj := range tc.referents(ns) {
				time.Sleep(time.Second) // let the dependent see each referent arrive
				create(t, obj)
			}
			start := time.Now()
			waitGenerated(t, ns, "app", tc.key, "")
			if took := time.Since(start); took > convergeBound {
				t.Errorf("synced %v after its last referent arrived, want within %v", took.Round(time.Millisecond), convergeBound)
			}
		})
	}
}

func readyCondition(es *esv1.ExternalSecret) *metav1.Condition {
	for i := range es.Status.Conditions {
		if es.Status.Conditions[i].Type == esv1.ConditionReady {
			return &es.Status.Conditions[i]
		}
	}
	return nil
}
