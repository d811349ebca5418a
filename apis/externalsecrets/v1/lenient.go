package v1

import "github.com/eso-dev/eso/apis/lenient"

// Kinds whose fields Go may fail to decode are decoded leniently, so that
// one such object does not fail the list of its kind (see package lenient).

// UnmarshalJSON decodes leniently: see package lenient.
func (o *ExternalSecret) UnmarshalJSON(data []byte) error {
	type plain ExternalSecret
	return lenient.Decode(data, (*plain)(o), func() { *o = ExternalSecret{} }, &o.TypeMeta, &o.ObjectMeta)
}

// UnmarshalJSON decodes leniently: see package lenient.
func (o *ClusterExternalSecret) UnmarshalJSON(data []byte) error {
	type plain ClusterExternalSecret
	return lenient.Decode(data, (*plain)(o), func() { *o = ClusterExternalSecret{} }, &o.TypeMeta, &o.ObjectMeta)
}
