package v1stores

import "github.com/eso-dev/eso/apis/lenient"

// Stores are decoded leniently, so that one store Go cannot decode does not
// fail the list of its kind (see package lenient).

// UnmarshalJSON decodes leniently: see package lenient.
func (o *SecretStore) UnmarshalJSON(data []byte) error {
	type plain SecretStore
	return lenient.Decode(data, (*plain)(o), func() { *o = SecretStore{} }, &o.TypeMeta, &o.ObjectMeta)
}

// UnmarshalJSON decodes leniently: see package lenient.
func (o *ClusterSecretStore) UnmarshalJSON(data []byte) error {
	type plain ClusterSecretStore
	return lenient.Decode(data, (*plain)(o), func() { *o = ClusterSecretStore{} }, &o.TypeMeta, &o.ObjectMeta)
}
