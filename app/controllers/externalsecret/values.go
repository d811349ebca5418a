package externalsecret

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strconv"

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

var unicodeEscape = regexp.MustCompile(`_U([0-9A-Fa-f]{4})_`)

// convertKey applies a remoteRef's conversionStrategy to a key dataFrom
// produced: Unicode turns "_U0040_" into "@".
func convertKey(strategy esv1.ConversionStrategy, key string) string {
	if strategy != esv1.ConversionUnicode {
		return key
	}
	return unicodeEscape.ReplaceAllStringFunc(key, func(m string) string {
		r, err := strconv.ParseUint(m[2:6], 16, 32)
		if err != nil {
			return m
		}
		return string(rune(r))
	})
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
