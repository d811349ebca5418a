package secretkeys

import (
	"errors"
	"maps"
	"slices"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// TestReverseUnicodeUndoesConvert: a key converted with the Unicode strategy
// (what an ExternalSecret writes) comes back as the remote name it was.
// (As upstream's, the encoding is ambiguous for a name that itself holds
// "_Uxxxx_".)
func TestReverseUnicodeUndoesConvert(t *testing.T) {
	for _, name := range []string{"db/password", "team@example.com", "plain-key", "ünïcödé", "emoji-😀"} {
		converted, err := Convert(esv1.ConversionUnicode, map[string][]byte{name: nil})
		if err != nil {
			t.Fatal(err)
		}
		key := slices.Collect(maps.Keys(converted))[0]
		if got := ReverseUnicode(key); got != name {
			t.Errorf("%q converts to %q, which reverses to %q", name, key, got)
		}
	}
	if got := ReverseUnicode("_Uzzzz_ and _U110000_"); got != "_Uzzzz_ and _U110000_" {
		t.Errorf("escapes that are no code point were changed: %q", got)
	}
}

func TestRenameAll(t *testing.T) {
	rename, err := Renamer(&esv1.ExternalSecretRewriteRegexp{Source: "^db-", Target: "prod/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := RenameAll(rename, map[string][]byte{"db-host": []byte("h"), "api": []byte("a")})
	if err != nil || string(got["prod/host"]) != "h" || string(got["api"]) != "a" || len(got) != 2 {
		t.Fatalf("renamed to %v, %v", slices.Collect(maps.Keys(got)), err)
	}
	clash, _ := Renamer(&esv1.ExternalSecretRewriteRegexp{Source: ".*", Target: "same"}, nil)
	if _, err := RenameAll(clash, map[string][]byte{"a": nil, "b": nil}); !errors.Is(err, ErrCollision) {
		t.Errorf("two keys renamed to one: %v", err)
	}
	upper, err := Renamer(nil, &esv1.ExternalSecretRewriteTransform{Template: "keys/{{ .value | upper }}"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := RenameAll(upper, map[string][]byte{"user": nil}); err != nil || len(got) != 1 || !slices.Contains(slices.Collect(maps.Keys(got)), "keys/USER") {
		t.Errorf("transform renamed to %v, %v", slices.Collect(maps.Keys(got)), err)
	}
}
