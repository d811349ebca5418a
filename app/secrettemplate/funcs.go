package secrettemplate

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// allowed are the sprig functions templates may use. It is an allowlist on
// purpose: nothing that reads the environment (env, expandenv), the network
// (getHostByName) or the cluster, and nothing random or time-dependent (rand*,
// uuidv4, now, genPrivateKey, bcrypt), which would change the Secret at
// every refresh and defeat "no write when nothing changed".
var allowed = []string{
	// strings
	"trim", "trimAll", "trimPrefix", "trimSuffix", "upper", "lower", "title", "untitle", "repeat",
	"substr", "nospace", "trunc", "abbrev", "abbrevboth", "initials", "wrap", "wrapWith", "contains",
	"hasPrefix", "hasSuffix", "quote", "squote", "cat", "indent", "nindent", "replace", "plural",
	"snakecase", "camelcase", "kebabcase", "swapcase", "split", "splitList", "splitn", "join",
	"sortAlpha", "toString", "toStrings",
	"regexMatch", "regexFindAll", "regexFind", "regexReplaceAll", "regexReplaceAllLiteral", "regexSplit", "regexQuoteMeta",
	// numbers
	"add", "add1", "sub", "div", "mod", "mul", "max", "min", "int", "int64", "float64", "atoi",
	"seq", "until", "untilStep", "round", "floor", "ceil",
	// flow and defaults
	"default", "empty", "coalesce", "ternary", "fail",
	// encodings
	"b64enc", "b64dec", "b32enc", "b32dec", "fromJson", "toJson", "toPrettyJson", "toRawJson",
	"mustFromJson", "mustToJson", "mustToPrettyJson", "mustToRawJson",
	// lists and dicts
	"list", "first", "rest", "last", "initial", "append", "prepend", "concat", "reverse", "uniq",
	"without", "has", "compact", "slice", "chunk", "dict", "get", "set", "unset", "hasKey", "pluck",
	"keys", "values", "pick", "omit", "merge", "mergeOverwrite", "dig", "deepCopy",
	// hashes (deterministic)
	"sha1sum", "sha256sum", "sha512sum", "adler32sum",
	// types
	"kindOf", "kindIs", "typeOf", "typeIs", "deepEqual",
	// dates from given values (not "now")
	"date", "dateInZone", "toDate", "dateModify", "duration", "durationRound", "unixEpoch", "htmlDate", "htmlDateInZone",
	// paths, URLs, versions (no I/O)
	"base", "dir", "ext", "clean", "isAbs", "urlParse", "urlJoin", "semver", "semverCompare",
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
		fm[name] = f
	}
	fm["toYaml"] = toYAML
	fm["fromYaml"] = fromYAML
	fm["filterPEM"] = filterPEM
	fm["pkcs12key"] = pkcs12Key
	fm["pkcs12keyPass"] = pkcs12KeyPass
	fm["pkcs12cert"] = pkcs12Cert
	fm["pkcs12certPass"] = pkcs12CertPass
	fm["pemToPkcs12"] = pemToPkcs12
	fm["pemToPkcs12Pass"] = pemToPkcs12Pass
	fm["fullPemToPkcs12"] = fullPemToPkcs12
	fm["fullPemToPkcs12Pass"] = fullPemToPkcs12Pass
	fm["jwkPublicKeyPem"] = jwkPublicKeyPem
	fm["jwkPrivateKeyPem"] = jwkPrivateKeyPem
	return fm
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

// filterPEM keeps the PEM blocks of one type, e.g. "CERTIFICATE" or "PRIVATE KEY".
func filterPEM(blockType, input string) (string, error) {
	var out bytes.Buffer
	rest := []byte(input)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type == blockType {
			if err := pem.Encode(&out, block); err != nil {
				return "", err
			}
		}
	}
	if out.Len() == 0 {
		return "", fmt.Errorf("no %s block in the PEM input", blockType)
	}
	return out.String(), nil
}
