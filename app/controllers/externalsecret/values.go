package externalsecret

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/secretkeys"
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

// convertKeys makes the keys dataFrom produced valid Secret keys
// (secretkeys.Convert); a collision is a bad value.
func convertKeys(strategy esv1.ConversionStrategy, in map[string][]byte) (map[string][]byte, error) {
	out, err := secretkeys.Convert(strategy, in)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBadValue, err)
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
