package v1alpha1

import "github.com/eso-dev/eso/apis/lenient"

// Kinds whose fields Go may fail to decode are decoded leniently, so that
// one such object does not fail the list of its kind (see package lenient).

// UnmarshalJSON decodes leniently: see package lenient.
func (o *PushSecret) UnmarshalJSON(data []byte) error {
	type plain PushSecret
	return lenient.Decode(data, (*plain)(o), func() { *o = PushSecret{} }, &o.TypeMeta, &o.ObjectMeta)
}

// UnmarshalJSON decodes leniently: see package lenient.
func (o *ClusterPushSecret) UnmarshalJSON(data []byte) error {
	type plain ClusterPushSecret
	return lenient.Decode(data, (*plain)(o), func() { *o = ClusterPushSecret{} }, &o.TypeMeta, &o.ObjectMeta)
}
