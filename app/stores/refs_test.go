package stores

import (
	"slices"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

func TestRefsOf(t *testing.T) {
	vault := esv1.SecretStoreRef{Name: "vault"}
	cluster := esv1.SecretStoreRef{Name: "vault", Kind: KindClusterSecretStore}
	v1 := esv1.SecretStoreRef{Name: "vault", APIVersion: "external-secrets.io/v1"}
	other := esv1.SecretStoreRef{Name: "other", Kind: KindSecretStore}
	from := func(ref esv1.SecretStoreRef) *esv1.StoreSourceRef { return &esv1.StoreSourceRef{SecretStoreRef: ref} }
	for name, tc := range map[string]struct {
		spec esv1.ExternalSecretSpec
		want []esv1.SecretStoreRef
	}{
		"the default store, when an entry uses it": {
			spec: esv1.ExternalSecretSpec{SecretStoreRef: &vault, Data: []esv1.ExternalSecretData{{SecretKey: "a"}}},
			want: []esv1.SecretStoreRef{vault},
		},
		"not the default store when no entry uses it": {
			spec: esv1.ExternalSecretSpec{SecretStoreRef: &vault, Data: []esv1.ExternalSecretData{{SecretKey: "a", SourceRef: from(other)}}},
			want: []esv1.SecretStoreRef{other},
		},
		"the default first, each store once; kinds and apiVersions apart": {
			spec: esv1.ExternalSecretSpec{SecretStoreRef: &vault, Data: []esv1.ExternalSecretData{
				{SecretKey: "a", SourceRef: from(other)}, {SecretKey: "b"}, {SecretKey: "c", SourceRef: from(other)},
				{SecretKey: "d", SourceRef: from(cluster)}, {SecretKey: "e", SourceRef: from(v1)},
				{SecretKey: "f", SourceRef: from(esv1.SecretStoreRef{Name: "vault", Kind: KindSecretStore})},
			}},
			want: []esv1.SecretStoreRef{vault, other, cluster, v1},
		},
		"a generator is no store": {
			spec: esv1.ExternalSecretSpec{SecretStoreRef: &vault, DataFrom: []esv1.ExternalSecretDataFromRemoteRef{
				{SourceRef: &esv1.StoreGeneratorSourceRef{GeneratorRef: &esv1.GeneratorRef{Kind: "Password", Name: "pw"}}}}},
		},
	} {
		got := RefsOf(&esv1.ExternalSecret{Spec: tc.spec})
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}
