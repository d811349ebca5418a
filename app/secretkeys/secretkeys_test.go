package secretkeys

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/secrettemplate"
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
	rename, err := Renamer(secrettemplate.NewBudget(), &esv1.ExternalSecretRewriteRegexp{Source: "^db-", Target: "prod/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := RenameAll(secrettemplate.NewBudget(), rename, map[string][]byte{"db-host": []byte("h"), "api": []byte("a")})
	if err != nil || string(got["prod/host"]) != "h" || string(got["api"]) != "a" || len(got) != 2 {
		t.Fatalf("renamed to %v, %v", slices.Collect(maps.Keys(got)), err)
	}
	clash, _ := Renamer(secrettemplate.NewBudget(), &esv1.ExternalSecretRewriteRegexp{Source: ".*", Target: "same"}, nil)
	if _, err := RenameAll(secrettemplate.NewBudget(), clash, map[string][]byte{"a": nil, "b": nil}); !errors.Is(err, ErrCollision) {
		t.Errorf("two keys renamed to one: %v", err)
	}
	upper, err := Renamer(secrettemplate.NewBudget(), nil, &esv1.ExternalSecretRewriteTransform{Template: "keys/{{ .value | upper }}"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := RenameAll(secrettemplate.NewBudget(), upper, map[string][]byte{"user": nil}); err != nil || len(got) != 1 || !slices.Contains(slices.Collect(maps.Keys(got)), "keys/USER") {
		t.Errorf("transform renamed to %v, %v", slices.Collect(maps.Keys(got)), err)
	}
}

// TestTransformsShareTheSyncBudget: a transform runs once per key, and
// every run charges the one budget of the sync, so a cheap template over
// many keys is refused instead of costing keys × a render's budget.
func TestTransformsShareTheSyncBudget(t *testing.T) {
	keys := map[string][]byte{}
	for i := range 2_000 {
		keys[strconv.Itoa(i)] = nil
	}
	for name, text := range map[string]string{
		"steps": `{{ range until 200 }}{{ end }}{{ .value }}`, // 200 steps a key: 400,000 in all
		"bytes": `{{ .value | repeat 4000 }}`,                 // up to 16 KB a key: 27 MB in all
	} {
		t.Run(name, func(t *testing.T) {
			b := secrettemplate.NewBudget()
			rename, err := Renamer(b, nil, &esv1.ExternalSecretRewriteTransform{Template: text})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := RenameAll(b, rename, keys); !errors.Is(err, secrettemplate.ErrBudget) {
				t.Fatalf("2,000 keys through one transform: %v, want the budget refused", err)
			}
			// One key costs little: the same rule over it is fine.
			b = secrettemplate.NewBudget()
			rename, _ = Renamer(b, nil, &esv1.ExternalSecretRewriteTransform{Template: text})
			if _, err := RenameAll(b, rename, map[string][]byte{"k": nil}); err != nil {
				t.Errorf("one key: %v", err)
			}
		})
	}
}

// TestRegexpRewritesAreChargedBeforeTheyGrow: a regexp target expands once
// per match, so a few rules grow one key to gigabytes; each rename is
// charged its largest size before it is built.
func TestRegexpRewritesAreChargedBeforeTheyGrow(t *testing.T) {
	b := secrettemplate.NewBudget()
	keys := map[string][]byte{"k": nil}
	var err error
	for range 4 {
		var rename func(string) (string, error)
		if rename, err = Renamer(b, &esv1.ExternalSecretRewriteRegexp{Source: "(.)", Target: strings.Repeat("$1", 512)}, nil); err != nil {
			t.Fatal(err)
		}
		if keys, err = RenameAll(b, rename, keys); err != nil {
			break
		}
	}
	if !errors.Is(err, secrettemplate.ErrBudget) {
		t.Fatalf("four growing rewrites: %v, want the budget refused", err)
	}
}
