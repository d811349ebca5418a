package explain

import (
	"reflect"
	"strconv"
	"strings"

	provv2 "github.com/eso-dev/eso/apis/providers/v2alpha1"
)

// secretRef is one credentials Secret key a provider configuration names.
type secretRef struct {
	// Field is the field's path, e.g. spec.auth.tokenSecretRef.
	Field string
	Name  string
	// Key is empty when the whole Secret is meant.
	Key string
}

var (
	selectorType = reflect.TypeOf(provv2.SecretKeySelector{})
	caType       = reflect.TypeOf(provv2.CAProvider{})
)

// secretRefs lists the Secret keys a provider configuration object names,
// found by type (every provider's credentials are a SecretKeySelector, and a
// CA bundle a CAProvider), so a provider kind added later is covered
// without a list here. Only names are read, never a value.
func secretRefs(config any) []secretRef {
	var out []secretRef
	walk(reflect.ValueOf(config), "", &out, 0)
	return out
}

// maxDepth bounds the walk; configuration types are shallow.
const maxDepth = 12

func walk(v reflect.Value, path string, out *[]secretRef, depth int) {
	if depth > maxDepth {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem(), path, out, depth+1)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			walk(v.Index(i), path+"["+strconv.Itoa(i)+"]", out, depth+1)
		}
	case reflect.Struct:
		switch v.Type() {
		case selectorType:
			s := v.Interface().(provv2.SecretKeySelector)
			if s.Name != "" {
				*out = append(*out, secretRef{Field: path, Name: s.Name, Key: s.Key})
			}
			return
		case caType:
			if ca := v.Interface().(provv2.CAProvider); ca.Type == provv2.CAProviderSecret && ca.Name != "" {
				*out = append(*out, secretRef{Field: path, Name: ca.Name, Key: ca.Key})
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case name == "-" || name == "metadata" || name == "status":
				continue
			case name == "" && f.Anonymous: // inlined
				walk(v.Field(i), path, out, depth+1)
				continue
			case name == "":
				name = f.Name
			}
			walk(v.Field(i), join(path, name), out, depth+1)
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
