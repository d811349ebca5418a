package v2alpha1

import "github.com/eso-dev/eso/apis/lenient"

// Kinds whose fields Go may fail to decode are decoded leniently, so that
// one such object does not fail the list of its kind (see package lenient).

// UnmarshalJSON decodes leniently: see package lenient.
func (o *Generator) UnmarshalJSON(data []byte) error {
	type plain Generator
	return lenient.Decode(data, (*plain)(o), func() { *o = Generator{} }, &o.TypeMeta, &o.ObjectMeta)
}

// UnmarshalJSON decodes leniently: see package lenient.
func (o *ClusterGenerator) UnmarshalJSON(data []byte) error {
	type plain ClusterGenerator
	return lenient.Decode(data, (*plain)(o), func() { *o = ClusterGenerator{} }, &o.TypeMeta, &o.ObjectMeta)
}

// UnmarshalJSON decodes leniently: see package lenient.
func (o *GeneratorState) UnmarshalJSON(data []byte) error {
	type plain GeneratorState
	return lenient.Decode(data, (*plain)(o), func() { *o = GeneratorState{} }, &o.TypeMeta, &o.ObjectMeta)
}
