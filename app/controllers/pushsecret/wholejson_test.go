package pushsecret

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestWholeSecretIsEncodingJSON: eso's encoder writes what encoding/json
// writes for the same map, and its size is known exactly before it is
// built, for every kind of byte a Secret may hold.
func TestWholeSecretIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := [][]byte{{0}, {1}, {'\b'}, {'\f'}, {'\n'}, {'\r'}, {'\t'}, {0x1f}, {'"'}, {'\\'}, {'<'}, {'>'}, {'&'}, {0x7f},
		[]byte("a"), []byte("é"), []byte("\u2028"), []byte("\u2029"), []byte("😀"), {0xff}, {0xc3}, {0xe2, 0x80}, {0xed, 0xa0, 0x80}}
	random := func() []byte {
		var b []byte
		for range rng.IntN(40) {
			b = append(b, alphabet[rng.IntN(len(alphabet))]...)
		}
		return b
	}
	cases := []map[string][]byte{nil, {}, {"": nil}, {"k": []byte("v")}}
	for range 2000 {
		m := map[string][]byte{}
		for range rng.IntN(6) {
			m[string(random())] = random()
		}
		cases = append(cases, m)
	}
	for _, m := range cases {
		obj := map[string]string{}
		for k, v := range m {
			obj[k] = string(v)
		}
		want, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		got := wholeSecret(m)
		if !bytes.Equal(got, want) {
			t.Fatalf("wholeSecret(%q) = %s, encoding/json writes %s", m, got, want)
		}
		if size := wholeSecretSize(m); size != int64(len(want)) || cap(got) != len(want) {
			t.Fatalf("wholeSecretSize(%q) = %d (buffer %d), the JSON is %d bytes", m, size, cap(got), len(want))
		}
	}
}
