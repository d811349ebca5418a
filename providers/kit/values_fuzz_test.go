package kit

import (
	"bytes"
	"errors"
	"testing"

	"github.com/eso-dev/eso/providers/plugin"
)

// FuzzSecretValue runs a remote secret's value (which a tenant's server
// decides) through every function that decodes it: property lookup, field
// extraction and the read-modify-write of a pushed or deleted property.
// Nothing may panic; a value FieldMap splits must give each field back
// through Property, and SetProperty's output must be an object holding the
// property it set.
func FuzzSecretValue(f *testing.F) {
	for _, v := range []string{
		`{"user":"app","password":"pw"}`,
		`{"db":{"host":"h","port":5432,"tls":true},"db.host":"flat","n":null}`,
		`{"big":12345678901234567890,"list":[1,"a",{"b":null}]}`,
		`plain-secret-value`, `[]`, `null`, `{}`, `{"a":`,
	} {
		for _, p := range []string{"password", "db.host", "db.port", "missing", "", "."} {
			f.Add([]byte(v), p)
		}
	}
	f.Fuzz(func(t *testing.T, value []byte, property string) {
		_, _ = Property(value, property)
		if fields, err := FieldMap(value); err == nil {
			for k, want := range fields {
				got, err := Property(value, k)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("field %q: FieldMap and Property disagree (%v)", k, err)
				}
			}
		}
		if out, err := SetProperty(value, property, []byte("v")); err == nil {
			if got, err := Property(out, property); err != nil || string(got) != "v" {
				t.Fatalf("SetProperty(%q) then Property: %v", property, err)
			}
		}
		if _, _, err := DeleteProperty(value, property); err != nil && !errors.Is(err, plugin.ErrInvalidConfig) && !errors.Is(err, plugin.ErrPropertyNotFound) {
			t.Fatalf("DeleteProperty(%q): unclassified error %v", property, err)
		}
	})
}
