package v2alpha1

import "github.com/eso-dev/eso/apis/lenient"

// Kinds whose fields Go may fail to decode are decoded leniently, so that
// one such object does not fail the list of its kind (see package lenient).

// UnmarshalJSON decodes leniently: see package lenient.
func (o *VaultDynamicSecret) UnmarshalJSON(data []byte) error {
	type plain VaultDynamicSecret
	return lenient.Decode(data, (*plain)(o), func() { *o = VaultDynamicSecret{} }, &o.TypeMeta, &o.ObjectMeta)
}
