package kit

import (
	"errors"
	"strings"
	"testing"

	"github.com/eso-dev/eso/providers/plugin"
)

func TestProperty(t *testing.T) {
	value := []byte(`{"user":"app","port":5432,"big":12345678901234567890,"db.host":"flat","db":{"host":"nested","tls":true},"none":null}`)
	for prop, want := range map[string]string{
		"user":    "app",
		"port":    "5432",
		"big":     "12345678901234567890",
		"db.host": "flat", // a top-level key wins over a path
		"db.tls":  "true",
		"db":      `{"host":"nested","tls":true}`,
		"none":    "",
	} {
		got, err := Property(value, prop)
		if err != nil || string(got) != want {
			t.Errorf("Property(%q) = %q, %v; want %q", prop, got, err, want)
		}
	}
	for _, prop := range []string{"missing", "db.missing", "user.x"} {
		if _, err := Property(value, prop); !errors.Is(err, plugin.ErrPropertyNotFound) || errors.Is(err, plugin.ErrSecretNotFound) {
			t.Errorf("Property(%q) error = %v, want ErrPropertyNotFound only", prop, err)
		}
	}
	_, err := Property([]byte("plain-secret-value"), "p")
	if !errors.Is(err, plugin.ErrPropertyNotFound) || strings.Contains(err.Error(), "plain-secret-value") {
		t.Errorf("Property of a non-JSON value: %v", err)
	}
}

func TestFieldMap(t *testing.T) {
	m, err := FieldMap([]byte(`{"a":"1","b":{"c":2}}`))
	if err != nil || string(m["a"]) != "1" || string(m["b"]) != `{"c":2}` || len(m) != 2 {
		t.Errorf("FieldMap = %q, %v", m, err)
	}
	for _, bad := range []string{`"string"`, `[1,2]`, `null`, `not json at all`} {
		_, err := FieldMap([]byte(bad))
		if err == nil || strings.Contains(err.Error(), bad) {
			t.Errorf("FieldMap(%s) error = %v: want an error that does not echo the value", bad, err)
		}
	}
}

func TestDeletePropertyThatIsNotThere(t *testing.T) {
	if _, _, err := DeleteProperty([]byte(`{"a":"1"}`), "b"); !errors.Is(err, plugin.ErrPropertyNotFound) {
		t.Fatalf("deleting a missing property: %v, want ErrPropertyNotFound (nothing to write)", err)
	}
	rest, empty, err := DeleteProperty([]byte(`{"a":"1","b":"2"}`), "b")
	if err != nil || empty || string(rest) != `{"a":"1"}` {
		t.Fatalf("DeleteProperty = %s, %v, %v", rest, empty, err)
	}
}

// TestSetPropertyKeepsBytes: JSON would turn bytes that are not UTF-8 into
// U+FFFD, so a pushed property (name or value) that is not text is refused
// instead of written as something else.
func TestSetPropertyKeepsBytes(t *testing.T) {
	for _, tc := range []struct {
		property string
		value    []byte
	}{
		{"\xfa", []byte("v")},
		{"key", []byte{0xff, 0x00, 0x01}},
	} {
		if out, err := SetProperty([]byte(`{"a":"b"}`), tc.property, tc.value); !errors.Is(err, plugin.ErrInvalidConfig) {
			t.Errorf("SetProperty(%q, %q) = %q, %v; want ErrInvalidConfig", tc.property, tc.value, out, err)
		}
	}
	if out, err := SetProperty(nil, "ключ", []byte("значение")); err != nil || string(out) != `{"ключ":"значение"}` {
		t.Errorf("UTF-8 text: %s, %v", out, err)
	}
}

// TestPropertyPathsAsUpstream: remoteRef.property is read as upstream reads
// it (gjson), array indexes and queries included; a top-level key with dots
// wins over the path it looks like.
func TestPropertyPathsAsUpstream(t *testing.T) {
	doc := []byte(`{
  "name": {"first": "Tom", "last": "Anderson"},
  "age": 37,
  "ratio": 1.50,
  "children": ["Sara", "Alex", "Jack"],
  "friends": [
    {"first": "Dale", "last": "Murphy", "age": 44},
    {"first": "Roger", "last": "Craig", "age": 68}
  ],
  "db.password": "dotted-key",
  "db": {"password": "nested"},
  "none": null
}`)
	for property, want := range map[string]string{
		"age":                           "37",
		"ratio":                         "1.50",
		"name.last":                     "Anderson",
		"children":                      `["Sara", "Alex", "Jack"]`,
		"children.1":                    "Alex",
		"children.#":                    "3",
		"friends.1.first":               "Roger",
		`friends.#(last=="Murphy").age`: "44",
		"db.password":                   "dotted-key",
		"db":                            `{"password": "nested"}`,
		"none":                          "",
	} {
		got, err := Property(doc, property)
		if err != nil || string(got) != want {
			t.Errorf("Property(%q) = %q, %v; want %q", property, got, err, want)
		}
	}
	for _, property := range []string{"friends.5.first", "name.middle", "nope"} {
		if _, err := Property(doc, property); !errors.Is(err, plugin.ErrPropertyNotFound) {
			t.Errorf("Property(%q) err = %v, want ErrPropertyNotFound", property, err)
		}
	}
	if _, err := Property([]byte("not json s3cr3t"), "a"); !errors.Is(err, plugin.ErrPropertyNotFound) || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("a value that is not JSON: %v", err)
	}
	// Syntax that builds values is refused: a short property of it can make
	// gjson allocate exponentially (this one would take over a gigabyte).
	bomb := "name" + strings.Repeat("|[@this,@this]", 23)
	for _, property := range []string{bomb, "children|@reverse", "[name.first,age]", "{a:age}", "..0", `!true`} {
		if _, err := Property(doc, property); !errors.Is(err, plugin.ErrInvalidConfig) {
			t.Errorf("Property(%q) err = %v, want ErrInvalidConfig", property, err)
		}
	}
	// A top-level key holding those characters is still read as written.
	if got, err := Property([]byte(`{"a|b@c":"v"}`), "a|b@c"); err != nil || string(got) != "v" {
		t.Errorf("a key with special characters: %q, %v", got, err)
	}
}
