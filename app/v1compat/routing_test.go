package v1compat

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
	"github.com/eso-dev/eso/app/stores"
)

// TestRoutingBySecretStoreRefAPIVersion: an explicit apiVersion picks its
// API; none picks the v1 store of the name when one exists (upstream's
// meaning), else the v2alpha1 store; and a build without the v1 layer says
// so for an explicit v1 reference.
func TestRoutingBySecretStoreRefAPIVersion(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{ssv2.AddToScheme, v1stores.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	fakeV1 := v1stores.SecretStoreSpec{Provider: &v1stores.SecretStoreProvider{Fake: &v1stores.FakeProvider{}}}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&v1stores.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "both"}, Spec: fakeV1},
		&ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "both"}},
		&ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "v2-only"}},
		&v1stores.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: "cluster-v1"}, Spec: fakeV1},
	).Build()
	withV1 := stores.NewResolver(reader, nil, nil, "").WithAPIs(APIs(Endpoints{})...)
	withoutV1 := stores.NewResolver(reader, nil, nil, "")
	ctx := context.Background()
	cases := []struct {
		name     string
		resolver *stores.Resolver
		ref      esv1.SecretStoreRef
		want     string // the store's apiVersion, or the error's words
	}{
		{"no apiVersion, both exist: v1", withV1, esv1.SecretStoreRef{Name: "both"}, stores.StoreAPIVersionV1},
		{"no apiVersion, only v2", withV1, esv1.SecretStoreRef{Name: "v2-only"}, esv1.StoreAPIVersionV2Alpha1},
		{"explicit v2 beside a v1 of the name", withV1, esv1.SecretStoreRef{Name: "both", APIVersion: esv1.StoreAPIVersionV2Alpha1}, esv1.StoreAPIVersionV2Alpha1},
		{"explicit v1", withV1, esv1.SecretStoreRef{Name: "both", APIVersion: esv1.StoreAPIVersionV1}, stores.StoreAPIVersionV1},
		{"explicit v1 missing", withV1, esv1.SecretStoreRef{Name: "v2-only", APIVersion: esv1.StoreAPIVersionV1}, "store not found: SecretStore team/v2-only (external-secrets.io/v1)"},
		{"cluster v1", withV1, esv1.SecretStoreRef{Name: "cluster-v1", Kind: stores.KindClusterSecretStore}, stores.StoreAPIVersionV1},
		{"no layer, no apiVersion: v2", withoutV1, esv1.SecretStoreRef{Name: "both"}, esv1.StoreAPIVersionV2Alpha1},
		{"no layer, explicit v1", withoutV1, esv1.SecretStoreRef{Name: "both", APIVersion: esv1.StoreAPIVersionV1}, "built without the v1 compatibility layer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.resolver.Get(ctx, "team", tc.ref)
			if err != nil {
				if !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %q, want %q", err, tc.want)
				}
				if errors.Is(err, stores.ErrUnsupportedVersion) != strings.Contains(tc.want, "built without") {
					t.Errorf("error %q: ErrUnsupportedVersion only for an API not served", err)
				}
				// Another build serves it: the outcome of a kind not compiled in.
				if errors.Is(err, stores.ErrNotCompiledIn) != strings.Contains(tc.want, "built without") {
					t.Errorf("error %q: ErrNotCompiledIn only for the API this build lacks", err)
				}
				return
			}
			if s.APIVersion != tc.want {
				t.Errorf("resolved the %s store, want %s", s.APIVersion, tc.want)
			}
		})
	}
}
