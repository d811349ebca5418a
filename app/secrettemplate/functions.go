package secrettemplate

import (
	"fmt"
	"reflect"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

// function is one function templates may call: where it comes from and
// what a call may produce, bounded before it runs (see budget.go).
type function struct {
	// impl is eso's own implementation; nil takes sprig's function of the
	// same name, through wrap when set.
	impl any
	wrap func(sprigs any) any
	// kdf builds a function whose cost is the key derivation its input asks
	// for: the render charges that work to its budget before it is done
	// (spend nil: unmetered, for parsing).
	kdf func(spend func(int64) error) any
	// cost bounds what one call produces; nil: about the size of its
	// arguments, for functions whose output is no larger than their input.
	cost func(c call) int64
}

// functions is every function a template may call, each named once. It is
// an allowlist: every sprig function is either here (as sprig has it, or
// replaced) or in excluded with the reason, and a sprig release that adds
// one fails TestEverySprigFunctionIsDecided until it is decided.
var functions = withSprig([]string{
	// strings
	"trim", "trimAll", "trimall", "trimPrefix", "trimSuffix", "upper", "lower", "title", "untitle",
	"substr", "nospace", "trunc", "abbrev", "abbrevboth", "initials", "contains",
	"hasPrefix", "hasSuffix", "squote", "cat", "plural",
	"snakecase", "camelcase", "kebabcase", "swapcase",
	"sortAlpha", "toString", "toStrings", "hello",
	"regexMatch", "regexFind", "regexQuoteMeta", "mustRegexMatch", "mustRegexFind",
	// numbers
	"add", "add1", "sub", "div", "mod", "mul", "max", "biggest", "min", "int", "int64", "float64", "atoi",
	"round", "floor", "ceil", "toDecimal",
	"add1f", "addf", "subf", "mulf", "divf", "maxf", "minf",
	// flow and defaults
	"default", "empty", "coalesce", "all", "any", "ternary", "fail",
	// encodings
	"b64enc", "b64dec", "b32enc", "b32dec", "fromJson", "mustFromJson",
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
	// dates from given values ("date" and friends are eso's below, since
	// sprig falls back to the current time for anything that is not a
	// time); toDate and mustToDate parse in eso's time zone, UTC in its image
	"toDate", "mustToDate", "dateModify", "date_modify", "mustDateModify", "must_date_modify", "duration", "unixEpoch",
	// paths, URLs, versions (no I/O; os* are path's on Linux)
	"base", "dir", "ext", "clean", "isAbs", "osBase", "osDir", "osExt", "osClean", "osIsAbs",
	"urlParse", "urlJoin", "semver", "semverCompare",
}, map[string]function{
	// sprig's, with a bound of their own: they amplify their input.
	"wrap":                       {cost: func(c call) int64 { return 2 * c.str(1) }},
	"wrapWith":                   {cost: insertedAtEveryByte(2, 1)}, // wrapWith width sep s
	"replace":                    {cost: insertedAtEveryByte(2, 1)}, // replace old new s
	"regexReplaceAll":            {cost: insertedAtEveryByte(1, 2)}, // regex s repl
	"regexReplaceAllLiteral":     {cost: insertedAtEveryByte(1, 2)},
	"mustRegexReplaceAll":        {cost: insertedAtEveryByte(1, 2)},
	"mustRegexReplaceAllLiteral": {cost: insertedAtEveryByte(1, 2)},
	"indent":                     {cost: indentCost},
	"nindent":                    {cost: indentCost},
	"join":                       {cost: joinCost},
	"split":                      {cost: splitCost},
	"splitList":                  {cost: splitCost},
	"splitn":                     {cost: splitnCost},
	"regexSplit":                 {cost: regexPiecesCost},
	"mustRegexSplit":             {cost: regexPiecesCost},
	"regexFindAll":               {cost: regexPiecesCost},
	"mustRegexFindAll":           {cost: regexPiecesCost},
	"quote":                      {cost: quoteCost},
	"toJson":                     {cost: escapedCost},
	"mustToJson":                 {cost: escapedCost},
	"toRawJson":                  {cost: escapedCost},
	"mustToRawJson":              {cost: escapedCost},
	"toPrettyJson":               {cost: indentedCost},
	"mustToPrettyJson":           {cost: indentedCost},

	// eso's deterministic replacements: sorted keys and values, bounded
	// repeat, dates only of given times, printf without pointer addresses.
	"keys":           {impl: sortedKeys},
	"values":         {impl: sortedValues},
	"repeat":         {impl: boundedRepeat, cost: func(c call) int64 { return mulCapped(c.num(0), c.str(1), c.room) }},
	"date":           {impl: dateOf},
	"dateInZone":     {impl: dateInZoneOf},
	"date_in_zone":   {impl: dateInZoneOf},
	"htmlDate":       {impl: htmlDate},
	"htmlDateInZone": {impl: htmlDateInZone},
	"durationRound":  {wrap: func(round any) any { return durationRoundOf(round.(func(any) string)) }},
	"printf":         {impl: safePrintf, cost: printfCost},
	// List builders whose size is known before they allocate, and a uniq
	// that takes linear time: see lists.go.
	"until":     {impl: until, cost: intListCost},
	"untilStep": {impl: untilStep, cost: intListCost},
	"seq":       {impl: seq, cost: seqCost},
	"uniq":      {impl: uniq},
	"mustUniq":  {impl: mustUniq},
	// decryptAES refuses what it cannot decrypt (sprig's panics or returns
	// noise); buildCustomCert bounds the key it parses.
	"decryptAES":      {impl: decryptAES},
	"buildCustomCert": {wrap: func(build any) any { return buildCustomCert(build) }},
	// text/template's own builtins that build text, so the render budget
	// counts them like every other function (a builtin it does not see
	// could double a string at each call).
	"print":    {impl: fmt.Sprint},
	"println":  {impl: fmt.Sprintln},
	"html":     {impl: template.HTMLEscaper, cost: escapedCost},
	"js":       {impl: template.JSEscaper, cost: escapedCost},
	"urlquery": {impl: template.URLQueryEscaper, cost: quoteCost},
	"toYaml":   {impl: toYAML, cost: indentedCost},
	"fromYaml": {impl: fromYAML},

	// Upstream's own functions: PEM, PKCS#12, JWK, RSA, htpasswd.
	"filterPEM":                 {impl: filterPEM},
	"filterCertChain":           {impl: filterCertChain},
	"certSANs":                  {impl: certSANs},
	"pkcs12key":                 {kdf: pkcs12Reader(readPkcs12Key, false)},
	"pkcs12keyPass":             {kdf: pkcs12Reader(readPkcs12Key, true)},
	"pkcs12cert":                {kdf: pkcs12Reader(readPkcs12Cert, false)},
	"pkcs12certPass":            {kdf: pkcs12Reader(readPkcs12Cert, true)},
	"pemToPkcs12":               {impl: pemToPkcs12, cost: archiveCost},
	"pemToPkcs12Pass":           {impl: pemToPkcs12Pass, cost: archiveCost},
	"fullPemToPkcs12":           {impl: fullPemToPkcs12, cost: archiveCost},
	"fullPemToPkcs12Pass":       {impl: fullPemToPkcs12Pass, cost: archiveCost},
	"pemTruststoreToPKCS12":     {impl: pemTruststoreToPKCS12, cost: archiveCost},
	"pemTruststoreToPKCS12Pass": {impl: pemTruststoreToPKCS12Pass, cost: archiveCost},
	"jwkPublicKeyPem":           {impl: jwkPublicKeyPem},
	"jwkPrivateKeyPem":          {impl: jwkPrivateKeyPem},
	"rsaDecrypt":                {impl: rsaDecrypt},
	"hexdec":                    {impl: hexdec},
	// htpasswd's bcrypt salt comes from its input (upstream's is random):
	// see htpasswd.go.
	"htpasswd": {impl: htpasswd},
})

// withSprig adds the names of sprig functions taken as sprig has them, at
// the default cost, to own. A name in both is a mistake.
func withSprig(asIs []string, own map[string]function) map[string]function {
	for _, name := range asIs {
		if _, dup := own[name]; dup {
			panic("secrettemplate: " + name + " is listed twice")
		}
		own[name] = function{}
	}
	return own
}

// funcMap is the function set of every template, unmetered: what templates
// parse against (budget.go instruments a render's copy).
var funcMap = buildFuncMap()

func buildFuncMap() template.FuncMap {
	sprigs := sprig.TxtFuncMap()
	fm := template.FuncMap{}
	for name, f := range functions {
		if _, ok := excluded[name]; ok {
			panic("secrettemplate: " + name + " is both allowed and excluded")
		}
		switch {
		case f.kdf != nil:
			fm[name] = f.kdf(nil)
		case f.impl != nil:
			fm[name] = f.impl
		default:
			fn, ok := sprigs[name]
			if !ok {
				panic("secrettemplate: sprig has no function " + name)
			}
			if f.wrap != nil {
				fn = f.wrap(fn)
			}
			fm[name] = fn
		}
	}
	return fm
}

// call is one call of a template function, as its cost model sees it
// before it runs: its arguments and the room the render has left.
type call struct {
	name string
	args []reflect.Value
	room int64
}

// text is argument i as a string, "" when it is not one.
func (c call) text(i int) string {
	if i < 0 || i >= len(c.args) {
		return ""
	}
	v := c.args[i]
	if v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.String {
		return ""
	}
	return v.String()
}

// str is the length of argument i as a string.
func (c call) str(i int) int64 { return int64(len(c.text(i))) }

// num is argument i as an integer, 0 when it is not one.
func (c call) num(i int) int64 {
	if i < len(c.args) && c.args[i].CanInt() {
		return c.args[i].Int()
	}
	return 0
}

// all is the size of every argument.
func (c call) all() int64 { return sizeOfAll(c.args, c.room) }

// estimate is an upper bound of what a call will produce, computed before
// it runs.
func estimate(name string, args []reflect.Value, b *Budget) int64 {
	c := call{name: name, args: args, room: maxProduced - b.produced}
	if cost := functions[name].cost; cost != nil {
		return cost(c)
	}
	return c.all()
}

// insertedAtEveryByte bounds a call that may put argument piece between
// any two bytes of argument into: replace, wrapWith, regexReplaceAll.
func insertedAtEveryByte(into, piece int) func(call) int64 {
	return func(c call) int64 { return c.str(into) + mulCapped(c.str(into)+1, c.str(piece), c.room) }
}

// indentCost: indent width s pads every line of s.
func indentCost(c call) int64 {
	if c.num(0) < 0 {
		return -1
	}
	last := len(c.args) - 1
	lines := int64(strings.Count(c.text(last), "\n")) + 1
	return c.str(last) + mulCapped(c.num(0), lines, c.room) + 1
}

// printfCost: a width pads every element of a list or dict argument (keys
// and values), not only every verb.
func printfCost(c call) int64 {
	w := formatWidth(c.text(0))
	if w < 0 {
		return -1
	}
	nodes, _ := shape(c.args[1:], c.room)
	return c.all() + mulCapped(w, int64(strings.Count(c.text(0), "%")+1)+2*nodes, c.room)
}

// intListCost: until and untilStep make a list of ints, 8 bytes each.
func intListCost(c call) int64 {
	n, _ := listSize(c.name, intArgs(c.args))
	return 8 + mulCapped(int64(min(n, uint64(c.room)+1)), 8, c.room)
}

// seqCost: seq makes numbers and spaces.
func seqCost(c call) int64 {
	n, width := listSize(c.name, intArgs(c.args))
	return 8 + mulCapped(int64(min(n, uint64(c.room)+1)), int64(width)+1, c.room)
}

// joinCost: join sep list puts the separator between every two elements.
func joinCost(c call) int64 {
	n := int64(1)
	if len(c.args) > 1 {
		list := c.args[1]
		if list.Kind() == reflect.Interface && !list.IsNil() {
			list = list.Elem()
		}
		if k := list.Kind(); k == reflect.Slice || k == reflect.Array {
			n = int64(list.Len())
		}
	}
	return c.all() + mulCapped(c.str(0), n, c.room)
}

// splitCost: split sep s makes a map or list entry per piece.
func splitCost(c call) int64 {
	return c.str(1) + mulCapped(pieces(c.text(1), c.text(0), c.room), pieceSize(c.name), c.room)
}

// splitnCost: splitn sep n s makes at most n pieces.
func splitnCost(c call) int64 {
	p := pieces(c.text(2), c.text(0), c.room)
	if n := c.num(1); n > 0 && n < p {
		p = n
	}
	return c.str(2) + mulCapped(p, pieceSize(c.name), c.room)
}

// regexPiecesCost: regexSplit and regexFindAll (regex s n) make at most a
// piece per byte, or n: counting the matches first would cost what it
// saves. Over a value of more than about 480 KiB, a template passes the
// count it needs as n.
func regexPiecesCost(c call) int64 {
	p := c.str(1) + 1
	if n := c.num(2); n >= 0 && n < p {
		p = n
	}
	return c.str(1) + mulCapped(p, pieceSize(c.name), c.room)
}

// archiveCost: a PKCS#12 archive holds its input's DER plus a few KiB of
// structure, then base64 adds a third.
func archiveCost(c call) int64 { return 2*c.all() + 4096 }

// indentedCost: escapes make a byte up to six ("\u0001"), and indentation
// grows with depth: the nesting is charged too.
func indentedCost(c call) int64 {
	n, depth := shape(c.args, c.room)
	return mulCapped(c.all(), 6, c.room) + mulCapped(n, 2*depth, c.room)
}

// escapedCost: escapes make a byte up to six ("\u003c", "&#34;").
func escapedCost(c call) int64 { return mulCapped(c.all(), 6, c.room) }

// quoteCost: "\x01" for a byte; "%01" for a byte, per argument.
func quoteCost(c call) int64 { return mulCapped(c.all(), 4, c.room) + 2*int64(len(c.args)) }
