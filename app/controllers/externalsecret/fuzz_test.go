package externalsecret

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/secrettemplate"
)

// The parsers below read tenant input (the ExternalSecret) and provider
// output (values). Whatever they are given they return a value or a
// classified error, never panic, and within their bounds.

// FuzzRewrite runs a regexp rule, a transform rule and a merge over
// fuzzed keys and values.
func FuzzRewrite(f *testing.F) {
	f.Add("^db-(.*)$", "app-$1", `{{ .value | upper }}`, "db-user", `{"a":1}`, "Extract")
	f.Add("(", "$1$1$1", `{{ repeat 4096 (repeat 4096 .value) }}`, "x", `{"a":{"b":[1,2]}}`, "JSON")
	f.Add(".*", "", `{{ range $i := until 3 }}{{ end }}`, "", `not json`, "Extract")
	f.Fuzz(func(t *testing.T, source, target, transform, key, value, strategy string) {
		in := map[string][]byte{key: []byte(value), key + "2": []byte(value)}
		rules := []esv1.ExternalSecretRewrite{
			{Regexp: &esv1.ExternalSecretRewriteRegexp{Source: source, Target: target}},
			{Transform: &esv1.ExternalSecretRewriteTransform{Template: transform}},
			{Merge: &esv1.ExternalSecretRewriteMerge{Strategy: strategy, Into: "merged", ConflictPolicy: "Ignore", PriorityPolicy: "IgnoreNotFound"}},
		}
		start := time.Now()
		out, err := rewrite(secrettemplate.NewBudget(), rules, in)
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("rewrite took %s", took)
		}
		if err != nil && !errors.Is(err, errBadRewrite) && !errors.Is(err, secrettemplate.ErrTemplate) {
			t.Fatalf("unclassified error: %v", err)
		}
		if err == nil && out == nil {
			t.Fatal("no error and no output")
		}
	})
}

// FuzzDecodeValue applies every decoding strategy and the NUL-byte policy
// to fuzzed values: errors are errBadValue and never hold the value.
func FuzzDecodeValue(f *testing.F) {
	for _, v := range []string{"aGVsbG8=", "aGVsbG8", "a-_b", "plain value", "\x00", "===="} {
		f.Add(v)
	}
	strategies := []esv1.DecodingStrategy{esv1.DecodingNone, esv1.DecodingBase64, esv1.DecodingBase64URL, esv1.DecodingAuto, "Unknown"}
	f.Fuzz(func(t *testing.T, value string) {
		for _, s := range strategies {
			for _, nul := range []esv1.NullBytePolicy{"", esv1.NullBytePolicyFail} {
				_, err := finishValue(s, nul, "k", []byte(value))
				if err != nil && !errors.Is(err, errBadValue) {
					t.Fatalf("%s: unclassified error %v", s, err)
				}
				if err != nil && len(value) >= 8 && strings.Contains(err.Error(), value) {
					t.Fatalf("%s: error holds the value: %v", s, err)
				}
			}
		}
	})
}

// FuzzSyncWindowSchedule parses fuzzed schedules and asks when a window
// allows a refresh: an error or a wait within a year, never a panic.
func FuzzSyncWindowSchedule(f *testing.F) {
	for _, s := range []string{"0 22 * * *", "*/5 * * * 1-5", "@every 1s", "TZ=UTC 0 0 * * *", "60 25 32 13 8", "0 0 30 2 *"} {
		f.Add(s, int64(3600))
	}
	f.Fuzz(func(t *testing.T, schedule string, seconds int64) {
		d := time.Duration(seconds%(7*24*3600)) * time.Second
		if d <= 0 {
			d = time.Second
		}
		now := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
		for _, kind := range []esv1.SyncWindowKind{esv1.SyncWindowAllow, esv1.SyncWindowDeny} {
			wait, err := windowWait(&esv1.SyncWindows{Kind: kind, Windows: []esv1.SyncWindow{{Schedule: schedule, Duration: metav1.Duration{Duration: d}}}}, now)
			if err == nil && (wait < 0 || wait > 366*24*time.Hour) {
				t.Fatalf("%s %q: wait %s", kind, schedule, wait)
			}
		}
	})
}
