package secrettemplate

import (
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// excluded are the sprig functions templates may not use, and why: a
// template is tenant input, and its Secret must be the same at every
// refresh where nothing changed ("no write when nothing changed"). A
// template calling one fails to parse.
var excluded = map[string]string{
	"env":                      "reads eso's environment",
	"expandenv":                "reads eso's environment",
	"getHostByName":            "asks DNS, from inside the cluster",
	"now":                      "reads the clock",
	"ago":                      "reads the clock",
	"randAlpha":                "random",
	"randAlphaNum":             "random",
	"randAscii":                "random",
	"randNumeric":              "random",
	"randBytes":                "random",
	"randInt":                  "random",
	"shuffle":                  "random",
	"uuidv4":                   "random",
	"bcrypt":                   "random salt (htpasswd takes its salt from its input)",
	"encryptAES":               "random IV",
	"genPrivateKey":            "random key",
	"genCA":                    "random key and serial, validity from the clock",
	"genCAWithKey":             "random serial, validity from the clock",
	"genSelfSignedCert":        "random key and serial, validity from the clock",
	"genSelfSignedCertWithKey": "random serial, validity from the clock",
	"genSignedCert":            "random key and serial, validity from the clock",
	"genSignedCertWithKey":     "random serial, validity from the clock",
	"derivePassword":           "scrypt with 32 MiB of memory a call, four times what a render may produce",
}

// hexdec decodes hexadecimal; like sprig's b64dec (and upstream's hexdec)
// it gives the decoding error as its result rather than failing.
func hexdec(s string) string {
	b, err := hex.DecodeString(s)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// maxRepeat bounds repeat, so a template cannot exhaust the controller's memory.
const maxRepeat = 4096

func boundedRepeat(count int, s string) (string, error) {
	if count < 0 || count > maxRepeat {
		return "", fmt.Errorf("repeat count %d is outside 0..%d", count, maxRepeat)
	}
	return strings.Repeat(s, count), nil
}

// sortedKeys lists the keys of dicts in order (sprig's follow map order).
func sortedKeys(dicts ...map[string]any) []string {
	var out []string
	for _, d := range dicts {
		out = append(out, slices.Collect(maps.Keys(d))...)
	}
	slices.Sort(out)
	return out
}

// sortedValues lists a dict's values in the order of its sorted keys.
func sortedValues(dict map[string]any) []any {
	out := make([]any, 0, len(dict))
	for _, k := range slices.Sorted(maps.Keys(dict)) {
		out = append(out, dict[k])
	}
	return out
}

// htmlDate formats a time as a date (2006-01-02), in UTC.
func htmlDate(t any) (string, error) { return dateOf("2006-01-02", t) }

func htmlDateInZone(t any, zone string) (string, error) {
	return dateInZoneOf("2006-01-02", t, zone)
}

// durationRoundOf is sprig's durationRound without its reading of the
// clock: given a time it would round the time since then.
func durationRoundOf(round func(any) string) func(any) (string, error) {
	return func(d any) (string, error) {
		switch d.(type) {
		case time.Time, *time.Time:
			return "", errors.New("durationRound of a time needs the current time; give a duration")
		}
		return round(d), nil
	}
}

// dateOf formats a time; unlike sprig's date it refuses what is not a time
// instead of formatting the current one.
func dateOf(layout string, t any) (string, error) { return dateInZoneOf(layout, t, "UTC") }

func dateInZoneOf(layout string, t any, zone string) (string, error) {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return "", fmt.Errorf("unknown time zone %q", zone)
	}
	switch v := t.(type) {
	case time.Time:
		return v.In(loc).Format(layout), nil
	case *time.Time:
		return v.In(loc).Format(layout), nil
	case int64:
		return time.Unix(v, 0).In(loc).Format(layout), nil
	case int:
		return time.Unix(int64(v), 0).In(loc).Format(layout), nil
	default:
		return "", errors.New("date needs a time or Unix seconds (use toDate to parse a string)")
	}
}

// safePrintf is printf without %p, whose pointer addresses change every run.
func safePrintf(format string, args ...any) (string, error) {
	if strings.Contains(format, "%p") {
		return "", errors.New("printf %p is not allowed: addresses change at every render")
	}
	return fmt.Sprintf(format, args...), nil
}

func toYAML(v any) (string, error) {
	b, err := yaml.Marshal(v)
	return strings.TrimSuffix(string(b), "\n"), err
}

func fromYAML(s string) (map[string]any, error) {
	var out map[string]any
	err := yaml.Unmarshal([]byte(s), &out)
	return out, err
}
