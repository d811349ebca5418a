package secrettemplate

import (
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// allowed are the sprig functions templates may use as sprig has them. It
// is an allowlist on purpose: every sprig function is either here, replaced
// by eso's own in buildFuncMap, or in excluded with the reason; a sprig
// release that adds one fails TestEverySprigFunctionIsDecided until it is
// decided. Upstream's own functions (PEM, PKCS#12, JWK, RSA, htpasswd) are
// added in buildFuncMap.
var allowed = []string{
	// strings
	"trim", "trimAll", "trimall", "trimPrefix", "trimSuffix", "upper", "lower", "title", "untitle",
	"substr", "nospace", "trunc", "abbrev", "abbrevboth", "initials", "wrap", "wrapWith", "contains",
	"hasPrefix", "hasSuffix", "quote", "squote", "cat", "indent", "nindent", "replace", "plural",
	"snakecase", "camelcase", "kebabcase", "swapcase", "split", "splitList", "splitn", "join",
	"sortAlpha", "toString", "toStrings", "hello",
	"regexMatch", "regexFindAll", "regexFind", "regexReplaceAll", "regexReplaceAllLiteral", "regexSplit", "regexQuoteMeta",
	"mustRegexMatch", "mustRegexFindAll", "mustRegexFind", "mustRegexReplaceAll", "mustRegexReplaceAllLiteral", "mustRegexSplit",
	// numbers
	"add", "add1", "sub", "div", "mod", "mul", "max", "biggest", "min", "int", "int64", "float64", "atoi",
	"round", "floor", "ceil", "toDecimal",
	"add1f", "addf", "subf", "mulf", "divf", "maxf", "minf",
	// flow and defaults
	"default", "empty", "coalesce", "all", "any", "ternary", "fail",
	// encodings
	"b64enc", "b64dec", "b32enc", "b32dec", "fromJson", "toJson", "toPrettyJson", "toRawJson",
	"mustFromJson", "mustToJson", "mustToPrettyJson", "mustToRawJson",
	// lists and dicts ("uniq" and "mustUniq" are eso's: see lists.go)
	"list", "tuple", "first", "mustFirst", "rest", "mustRest", "last", "mustLast", "initial", "mustInitial",
	"append", "push", "mustAppend", "mustPush", "prepend", "mustPrepend", "concat", "reverse", "mustReverse",
	"without", "mustWithout", "has", "mustHas", "compact", "mustCompact", "slice", "mustSlice", "chunk", "mustChunk",
	"dict", "get", "set", "unset", "hasKey", "pluck", "pick", "omit", "merge", "mustMerge", "mergeOverwrite",
	"mustMergeOverwrite", "dig", "deepCopy", "mustDeepCopy",
	// hashes (deterministic)
	"sha1sum", "sha256sum", "sha512sum", "adler32sum",
	// types
	"kindOf", "kindIs", "typeOf", "typeIs", "typeIsLike", "deepEqual",
	// dates from given values; "date" and friends are wrapped below, since sprig
	// falls back to the current time for anything that is not a time. toDate
	// and mustToDate parse in eso's time zone, UTC in its image.
	"toDate", "mustToDate", "dateModify", "date_modify", "mustDateModify", "must_date_modify", "duration", "unixEpoch",
	// paths, URLs, versions (no I/O; os* are path's on Linux)
	"base", "dir", "ext", "clean", "isAbs", "osBase", "osDir", "osExt", "osClean", "osIsAbs",
	"urlParse", "urlJoin", "semver", "semverCompare",
}

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

// funcMap is the function set of every template.
var funcMap = buildFuncMap()

func buildFuncMap() template.FuncMap {
	all := sprig.TxtFuncMap()
	fm := template.FuncMap{}
	for _, name := range allowed {
		f, ok := all[name]
		if !ok {
			panic("secrettemplate: sprig has no function " + name)
		}
		if _, ok := excluded[name]; ok {
			panic("secrettemplate: " + name + " is both allowed and excluded")
		}
		fm[name] = f
	}
	// Deterministic replacements: sorted keys and values, bounded repeat,
	// dates only of given times, printf without pointer addresses.
	fm["keys"] = sortedKeys
	fm["values"] = sortedValues
	fm["repeat"] = boundedRepeat
	fm["date"] = dateOf
	fm["dateInZone"] = dateInZoneOf
	fm["date_in_zone"] = dateInZoneOf
	fm["htmlDate"] = htmlDate
	fm["htmlDateInZone"] = htmlDateInZone
	fm["durationRound"] = durationRoundOf(all["durationRound"].(func(any) string))
	// List builders whose size is known before they allocate, and a uniq
	// that takes linear time: see lists.go.
	fm["until"] = until
	fm["untilStep"] = untilStep
	fm["seq"] = seq
	fm["uniq"] = uniq
	fm["mustUniq"] = mustUniq
	// decryptAES refuses what it cannot decrypt (sprig's panics or returns
	// noise); buildCustomCert bounds the key it parses.
	fm["decryptAES"] = decryptAES
	fm["buildCustomCert"] = buildCustomCert(all["buildCustomCert"])
	fm["printf"] = safePrintf
	// text/template's own builtins that build text, listed here so the
	// render budget counts them like every other function (a builtin it
	// does not see could double a string at each call).
	fm["print"] = fmt.Sprint
	fm["println"] = fmt.Sprintln
	fm["html"] = template.HTMLEscaper
	fm["js"] = template.JSEscaper
	fm["urlquery"] = template.URLQueryEscaper
	fm["toYaml"] = toYAML
	fm["fromYaml"] = fromYAML
	fm["filterPEM"] = filterPEM
	fm["filterCertChain"] = filterCertChain
	fm["certSANs"] = certSANs
	for name, metered := range kdfFuncs {
		fm[name] = metered(nil)
	}
	fm["pemToPkcs12"] = pemToPkcs12
	fm["pemToPkcs12Pass"] = pemToPkcs12Pass
	fm["fullPemToPkcs12"] = fullPemToPkcs12
	fm["fullPemToPkcs12Pass"] = fullPemToPkcs12Pass
	fm["pemTruststoreToPKCS12"] = pemTruststoreToPKCS12
	fm["pemTruststoreToPKCS12Pass"] = pemTruststoreToPKCS12Pass
	fm["jwkPublicKeyPem"] = jwkPublicKeyPem
	fm["jwkPrivateKeyPem"] = jwkPrivateKeyPem
	fm["rsaDecrypt"] = rsaDecrypt
	fm["hexdec"] = hexdec
	// htpasswd's bcrypt salt comes from its input (upstream's is random):
	// see htpasswd.go.
	fm["htpasswd"] = htpasswd
	return fm
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
