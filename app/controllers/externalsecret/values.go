package externalsecret

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// errBadValue: a value the provider returned does not fit the ExternalSecret's
// decoding or NUL-byte policy. Retrying cannot fix it; a change can.
var errBadValue = errors.New("unusable value")

// decodeValue applies a remoteRef's decodingStrategy. Errors name the key,
// never the value.
func decodeValue(strategy esv1.DecodingStrategy, key string, v []byte) ([]byte, error) {
	switch strategy {
	case esv1.DecodingBase64:
		out, err := base64.StdEncoding.DecodeString(string(v))
		if err != nil {
			return nil, fmt.Errorf("%w: value of %q is not valid base64 (decodingStrategy Base64)", errBadValue, key)
		}
		return out, nil
	case esv1.DecodingBase64URL:
		out, err := base64.URLEncoding.DecodeString(string(v))
		if err != nil {
			return nil, fmt.Errorf("%w: value of %q is not valid base64url (decodingStrategy Base64URL)", errBadValue, key)
		}
		return out, nil
	case esv1.DecodingAuto:
		// Padded encodings only, as upstream: unpadded ones would "decode"
		// plenty of plain words.
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			if out, err := enc.DecodeString(string(v)); err == nil {
				return out, nil
			}
		}
		return v, nil
	default:
		return v, nil
	}
}

// invalidKeyChar matches a character a Secret key may not hold.
var invalidKeyChar = regexp.MustCompile(`[^a-zA-Z0-9._-]`)

// convertKeys makes the keys dataFrom produced valid Secret keys, as upstream
// ESO does: Default replaces each invalid character by "_", Unicode by
// "_Uxxxx_" (its code point). Two keys converting to one is an error rather
// than a coin toss between them.
func convertKeys(strategy esv1.ConversionStrategy, in map[string][]byte) (map[string][]byte, error) {
	out := make(map[string][]byte, len(in))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		converted := invalidKeyChar.ReplaceAllStringFunc(k, func(c string) string {
			if strategy == esv1.ConversionUnicode {
				return fmt.Sprintf("_U%04x_", []rune(c)[0])
			}
			return "_"
		})
		if _, dup := out[converted]; dup {
			return nil, fmt.Errorf("%w: keys convert to the same Secret key %q (conversionStrategy %s)", errBadValue, converted, strategy)
		}
		out[converted] = in[k]
	}
	return out, nil
}

// checkNullBytes applies a remoteRef's nullBytePolicy.
func checkNullBytes(policy esv1.NullBytePolicy, key string, v []byte) error {
	if policy == esv1.NullBytePolicyFail && bytes.IndexByte(v, 0) >= 0 {
		return fmt.Errorf("%w: value of %q contains a NUL byte (nullBytePolicy Fail)", errBadValue, key)
	}
	return nil
}

// finishValue decodes a fetched value and checks it for NUL bytes.
func finishValue(decoding esv1.DecodingStrategy, nullBytes esv1.NullBytePolicy, key string, v []byte) ([]byte, error) {
	v, err := decodeValue(decoding, key, v)
	if err != nil {
		return nil, err
	}
	return v, checkNullBytes(nullBytes, key, v)
}
