package pushsecret

import (
	"maps"
	"slices"
	"unicode/utf8"
)

// A whole Secret is pushed as one JSON object of strings, byte for byte what
// encoding/json makes of a map[string]string (sorted keys, HTML-safe
// escapes, invalid UTF-8 as U+FFFD), as upstream pushes it. eso writes it
// itself so that its exact size is known, and charged, before any byte of
// it is allocated, and so that the values are not copied into strings on
// the way: JSON turns a control byte into six, so a 700 KB Secret can
// become 4 MB.

// asciiEscapes is the JSON escape of each ASCII byte that needs one.
var asciiEscapes = func() [utf8.RuneSelf]string {
	const hex = "0123456789abcdef"
	var t [utf8.RuneSelf]string
	for b := range byte(0x20) {
		t[b] = `\u00` + string(hex[b>>4]) + string(hex[b&0xf])
	}
	t['\b'], t['\f'], t['\n'], t['\r'], t['\t'] = `\b`, `\f`, `\n`, `\r`, `\t`
	t['"'], t['\\'] = `\"`, `\\`
	t['<'], t['>'], t['&'] = `\u003c`, `\u003e`, `\u0026`
	return t
}()

// escapeAt is how the bytes of s at i are written in a JSON string: the
// escape ("" when they are written as they are) and how many bytes of s it
// covers.
func escapeAt(s []byte, i int) (string, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiEscapes[b], 1
	}
	r, size := utf8.DecodeRune(s[i:])
	switch {
	case r == utf8.RuneError && size == 1:
		return `\ufffd`, 1
	case r == '\u2028':
		return `\u2028`, size
	case r == '\u2029':
		return `\u2029`, size
	}
	return "", size
}

// jsonStringSize is the length of s as a JSON string, quotes included.
func jsonStringSize(s []byte) int64 {
	n := int64(2)
	for i := 0; i < len(s); {
		esc, size := escapeAt(s, i)
		if esc != "" {
			n += int64(len(esc))
		} else {
			n += int64(size)
		}
		i += size
	}
	return n
}

func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		esc, size := escapeAt(s, i)
		if esc != "" {
			dst = append(append(dst, s[start:i]...), esc...)
			start = i + size
		}
		i += size
	}
	return append(append(dst, s[start:]...), '"')
}

// wholeSecretSize is the length of wholeSecret(data).
func wholeSecretSize(data map[string][]byte) int64 {
	n := int64(2) // {}
	for k, v := range data {
		n += jsonStringSize([]byte(k)) + 1 + jsonStringSize(v) + 1 // "k":"v",
	}
	if len(data) > 0 {
		n-- // no comma after the last
	}
	return n
}

// wholeSecret is data as one JSON object of strings, built in one buffer of
// its exact size.
func wholeSecret(data map[string][]byte) []byte {
	out := make([]byte, 0, wholeSecretSize(data))
	out = append(out, '{')
	for i, k := range slices.Sorted(maps.Keys(data)) {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(appendJSONString(out, []byte(k)), ':')
		out = appendJSONString(out, data[k])
	}
	return append(out, '}')
}
