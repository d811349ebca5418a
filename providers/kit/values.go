package kit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/eso-dev/eso/providers/plugin"
	"github.com/tidwall/gjson"
)

// Property returns one field of a JSON value, as upstream reads
// remoteRef.property: a top-level key as written (dots included) if there
// is one, else a gjson path ("db.password", "friends.1.first",
// "users.#(name==\"app\").token"). Strings are returned as is, everything
// else as the JSON it is written as. gjson reads only the value it is
// given; the value's size is bounded before it gets here. The error names
// the property, never the value.
func Property(value []byte, property string) ([]byte, error) {
	if !gjson.ValidBytes(value) {
		return nil, fmt.Errorf("%w: property %q requested but the secret is not JSON", plugin.ErrPropertyNotFound, property)
	}
	r := gjson.GetBytes(value, gjson.Escape(property))
	if !r.Exists() {
		if err := simplePath(property); err != nil {
			return nil, err
		}
		r = gjson.GetBytes(value, property)
	}
	if !r.Exists() {
		return nil, fmt.Errorf("%w: property %q", plugin.ErrPropertyNotFound, property)
	}
	switch r.Type {
	case gjson.String:
		return []byte(r.Str), nil
	case gjson.Null:
		return nil, nil
	default:
		return []byte(r.Raw), nil
	}
}

// simplePath refuses the gjson syntax that builds new values (modifiers
// "@", pipes "|", multipaths "[" and "{", "!" literals, ".." JSON lines):
// a short property of them can make gjson allocate exponentially, and a
// property comes from a tenant. Keys, escapes, array indexes, "#" and
// "#(...)" queries stay: they only read the value.
func simplePath(property string) error {
	for i := 0; i < len(property); i++ {
		switch c := property[i]; c {
		case '\\':
			i++ // an escaped character is part of a key
		case '@', '|', '[', '{', '!':
			return fmt.Errorf("%w: property %q uses %q, which only paths that read are allowed without: "+
				"keys, array indexes, # and #(...) queries", plugin.ErrInvalidConfig, property, string(c))
		case '.':
			if i+1 < len(property) && property[i+1] == '.' {
				return fmt.Errorf("%w: property %q uses \"..\", which only paths that read are allowed without", plugin.ErrInvalidConfig, property)
			}
		}
	}
	return nil
}

// FieldMap splits a JSON object value into its top-level fields, for
// dataFrom.extract.
func FieldMap(value []byte) (map[string][]byte, error) {
	obj, err := DecodeObject(value)
	if err != nil {
		return nil, errNotAnObject
	}
	out := make(map[string][]byte, len(obj))
	for k, v := range obj {
		b, err := encodeField(v)
		if err != nil {
			return nil, err
		}
		out[k] = b
	}
	return out, nil
}

var errNotAnObject = errors.New("the secret is not a JSON object, so its fields cannot be extracted")

// DecodeObject decodes a JSON object, keeping numbers exact; anything else
// is an error.
func DecodeObject(value []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errNotAnObject
	}
	return obj, nil
}

func encodeField(v any) ([]byte, error) {
	switch t := v.(type) {
	case string:
		return []byte(t), nil
	case nil:
		return nil, nil
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("encoding field: %w", err)
		}
		return b, nil
	}
}

// SetProperty returns current (a JSON object, or empty) with the top-level
// field property set to value (as a string), for pushing one property of a
// structured secret.
func SetProperty(current []byte, property string, value []byte) ([]byte, error) {
	// JSON holds text: encoding would turn bytes that are not UTF-8 into
	// U+FFFD, writing another property name, or a value other than the one
	// pushed, without a word.
	if !utf8.ValidString(property) {
		return nil, fmt.Errorf("%w: property name %q is not UTF-8 text", plugin.ErrInvalidConfig, property)
	}
	if !utf8.Valid(value) {
		return nil, fmt.Errorf("%w: the value for property %q is not UTF-8 text, so a JSON field cannot hold it", plugin.ErrInvalidConfig, property)
	}
	obj := map[string]any{}
	if len(bytes.TrimSpace(current)) > 0 {
		decoded, err := DecodeObject(current)
		if err != nil {
			return nil, fmt.Errorf("%w: cannot set property %q: the remote secret is not a JSON object", plugin.ErrInvalidConfig, property)
		}
		obj = decoded
	}
	obj[property] = string(value)
	return json.Marshal(obj)
}

// DeleteProperty returns current without the top-level field property, and
// whether no field is left. A property that is not there is
// ErrPropertyNotFound: there is nothing to write.
func DeleteProperty(current []byte, property string) ([]byte, bool, error) {
	obj, err := DecodeObject(current)
	if err != nil {
		return nil, false, fmt.Errorf("%w: cannot delete property %q: the remote secret is not a JSON object", plugin.ErrInvalidConfig, property)
	}
	if _, ok := obj[property]; !ok {
		return nil, false, fmt.Errorf("%w: %q", plugin.ErrPropertyNotFound, property)
	}
	delete(obj, property)
	out, err := json.Marshal(obj)
	return out, len(obj) == 0, err
}

// FieldsOf is GetSecretMap for providers whose GetSecret returns a JSON
// object: the fields of value, or err as it came.
func FieldsOf(value []byte, err error, key string) (map[string][]byte, error) {
	if err != nil {
		return nil, err
	}
	fields, err := FieldMap(value)
	if err != nil {
		return nil, fmt.Errorf("secret %q: %w", key, err)
	}
	return fields, nil
}
