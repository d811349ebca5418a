package externalsecret

import (
	"errors"
	"strings"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

func TestDecodeValue(t *testing.T) {
	cases := []struct {
		strategy esv1.DecodingStrategy
		in, want string
		bad      bool
	}{
		{esv1.DecodingNone, "aGVsbG8=", "aGVsbG8=", false},
		{"", "aGVsbG8=", "aGVsbG8=", false},
		{esv1.DecodingBase64, "aGVsbG8=", "hello", false},
		{esv1.DecodingBase64, "not base64!", "", true},
		{esv1.DecodingBase64URL, "Pz8-", "??>", false},
		{esv1.DecodingBase64URL, "Pz8+", "", true},
		{esv1.DecodingAuto, "aGVsbG8=", "hello", false},
		{esv1.DecodingAuto, "Pz8-", "??>", false},
		{esv1.DecodingAuto, "aGVsbG8", "aGVsbG8", false},         // unpadded: left alone
		{esv1.DecodingAuto, "not-encoded", "not-encoded", false}, // valid unpadded base64url, still plain text
		{esv1.DecodingAuto, "plain text!", "plain text!", false},
	}
	for _, tc := range cases {
		got, err := decodeValue(tc.strategy, "k", []byte(tc.in))
		if tc.bad {
			if !errors.Is(err, errBadValue) || strings.Contains(err.Error(), tc.in) {
				t.Errorf("%s(%q): error %v; want errBadValue not echoing the value", tc.strategy, tc.in, err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%s(%q) = %q, %v; want %q", tc.strategy, tc.in, got, err, tc.want)
		}
	}
}

func TestConvertKeys(t *testing.T) {
	in := map[string][]byte{"prod/db host": []byte("1"), "ok.key-1_x": []byte("2")}
	got, err := convertKeys(esv1.ConversionDefault, in)
	if err != nil || string(got["prod_db_host"]) != "1" || string(got["ok.key-1_x"]) != "2" || len(got) != 2 {
		t.Errorf("Default: %q, %v", got, err)
	}
	got, err = convertKeys(esv1.ConversionUnicode, in)
	if err != nil || string(got["prod_U002f_db_U0020_host"]) != "1" || len(got) != 2 {
		t.Errorf("Unicode: %q, %v", got, err)
	}
	if _, err := convertKeys(esv1.ConversionDefault, map[string][]byte{"a/b": nil, "a@b": nil}); !errors.Is(err, errBadValue) {
		t.Errorf("collision: %v", err)
	}
}

func TestNullBytes(t *testing.T) {
	if err := checkNullBytes(esv1.NullBytePolicyFail, "k", []byte("a\x00b")); !errors.Is(err, errBadValue) {
		t.Errorf("Fail: %v", err)
	}
	if err := checkNullBytes(esv1.NullBytePolicyIgnore, "k", []byte("a\x00b")); err != nil {
		t.Errorf("Ignore: %v", err)
	}
	if err := checkNullBytes(esv1.NullBytePolicyFail, "k", []byte("ab")); err != nil {
		t.Errorf("Fail without NUL: %v", err)
	}
}
