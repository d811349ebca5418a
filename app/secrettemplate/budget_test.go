package secrettemplate

import (
	"errors"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// bombs are templates that, without a budget, allocate gigabytes or run for
// hours. Each must fail with ErrBudget (or the output bound), quickly and
// in little memory.
var bombs = map[string]string{
	"print doubling":           `{{ $a := "0123456789abcdef" }}` + strings.Repeat(`{{ $a = print $a $a }}`, 30),
	"js doubling":              `{{ $a := "\\\\\\\\" }}` + strings.Repeat(`{{ $a = js $a }}`, 30),
	"println doubling":         `{{ $a := "0123456789abcdef" }}` + strings.Repeat(`{{ $a = println $a $a }}`, 30),
	"nested repeat":            `{{ repeat 4096 (repeat 4096 (repeat 4096 "x")) }}`,
	"nested repeat, discarded": `{{ $x := repeat 4096 (repeat 4096 (repeat 4096 "x")) }}`,
	"nested indent":            `{{ $x := indent 4096 (indent 4096 (indent 4096 (repeat 4096 "\n"))) }}`,
	"nested nindent":           `{{ $x := nindent 100000 (nindent 100000 (repeat 4096 "a\n")) }}`,
	"replace amplification":    `{{ $x := replace "" (repeat 4096 "y") (replace "" (repeat 4096 "y") (repeat 4096 "x")) }}`,
	"regex amplification":      `{{ $x := regexReplaceAll "" (repeat 4096 "x") (repeat 4096 "$0") }}`,
	"wrapWith amplification":   `{{ $x := wrapWith 1 (repeat 4096 "-") (repeat 4096 "x") }}`,
	"three nested ranges":      `{{ $l := splitList "" (repeat 4096 "x") }}{{ range $l }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}{{ end }}`,
	"range over a huge int":    `{{ range 2000000000 }}{{ end }}`,
	"endless recursion":        `{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}`,
	"printf width":             `{{ $x := printf "%999999999d" 1 }}`,
	"printf star width":        `{{ $x := printf "%*d" 999999999 1 }}`,
	"join of shared strings":   `{{ $s := repeat 4096 (repeat 512 "x") }}{{ $x := join "" (list $s $s $s $s $s) }}`,
	"toJson of shared lists":   `{{ $s := repeat 4096 (repeat 256 "x") }}{{ $l := list $s $s $s $s }}{{ $x := toJson (list $l $l $l $l) }}`,
	"doubling in a range":      `{{ $s := "x" }}{{ range 64 }}{{ $s = cat $s $s }}{{ end }}`,
}

func TestTemplateBombsExhaustTheBudgetNotEso(t *testing.T) {
	for name, text := range bombs {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"k": text}}, fetched, Sources{})
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTemplate) {
				t.Fatalf("rendered: %v", err)
			}
			if !errors.Is(err, ErrBudget) && !strings.Contains(err.Error(), "renders more than") {
				t.Errorf("failed, but not on a bound: %v", err)
			}
			// The budget allows 8 MiB produced plus 1 MiB of output; the
			// rest is Go's own garbage (reflection, growing buffers).
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
			// The wall-time bound is 1 s; -race on a busy machine is slower.
			if took > 10*maxRenderTime {
				t.Errorf("took %s", took)
			}
		})
	}
}

func TestBudgetIsSharedByARender(t *testing.T) {
	// Each key alone fits; together they pass the bytes a render may produce.
	data := map[string]string{}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		data[k] = `{{ $x := repeat 1024 (repeat 2048 "x") }}ok`
	}
	if _, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"a": data["a"]}}, fetched, Sources{}); err != nil {
		t.Fatalf("one key alone: %v", err)
	}
	if _, err := Render(&esv1.ExternalSecretTemplate{Data: data}, fetched, Sources{}); !errors.Is(err, ErrBudget) {
		t.Fatalf("five keys: %v, want the render budget exceeded", err)
	}
}

func TestBudgetErrorsNameTheBoundNotTheValue(t *testing.T) {
	_, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"k": `{{ repeat 4096 (repeat 4096 .password) }}`}}, fetched, Sources{})
	if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "repeat would take the bytes produced past 8388608") {
		t.Fatalf("error = %v", err)
	}
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("error leaks the value: %v", err)
	}
}

func TestStandaloneTemplatesGetABudgetPerExecution(t *testing.T) {
	tpl, err := Compile("transform", `{{ $x := repeat 1024 (repeat 4096 "x") }}{{ .value }}`)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 { // 4 MiB each: only a shared budget would refuse the third
		if out, err := tpl.Execute(map[string]string{"value": "k"}); err != nil || out != "k" {
			t.Fatalf("execution %d = %q, %v", i, out, err)
		}
	}
}

// TestFunctionSetIsPinned: adding a template function is a reviewed change.
// Templates are tenant input, so no function may read the environment, the
// network or DNS, files, or the cluster (another namespace's Secrets).
func TestFunctionSetIsPinned(t *testing.T) {
	want := strings.Fields(`abbrev abbrevboth add add1 add1f addf adler32sum all any append atoi b32dec b32enc b64dec b64enc
		base biggest buildCustomCert camelcase cat ceil certSANs chunk clean coalesce compact concat
		contains date dateInZone dateModify date_in_zone date_modify decryptAES deepCopy deepEqual default
		dict dig dir div divf duration durationRound empty ext fail filterCertChain filterPEM first float64
		floor fromJson fromYaml fullPemToPkcs12 fullPemToPkcs12Pass get has hasKey hasPrefix hasSuffix hello
		hexdec html htmlDate htmlDateInZone htpasswd indent initial initials int int64 isAbs join js
		jwkPrivateKeyPem jwkPublicKeyPem kebabcase keys kindIs kindOf last list lower max maxf merge
		mergeOverwrite min minf mod mul mulf mustAppend mustChunk mustCompact mustDateModify mustDeepCopy
		mustFirst mustFromJson mustHas mustInitial mustLast mustMerge mustMergeOverwrite mustPrepend
		mustPush mustRegexFind mustRegexFindAll mustRegexMatch mustRegexReplaceAll
		mustRegexReplaceAllLiteral mustRegexSplit mustRest mustReverse mustSlice mustToDate mustToJson
		mustToPrettyJson mustToRawJson mustUniq mustWithout must_date_modify nindent nospace omit osBase
		osClean osDir osExt osIsAbs pemToPkcs12 pemToPkcs12Pass pemTruststoreToPKCS12
		pemTruststoreToPKCS12Pass pick pkcs12cert pkcs12certPass pkcs12key pkcs12keyPass pluck plural
		prepend print printf println push quote regexFind regexFindAll regexMatch regexQuoteMeta
		regexReplaceAll regexReplaceAllLiteral regexSplit repeat replace rest reverse round rsaDecrypt
		semver semverCompare seq set sha1sum sha256sum sha512sum slice snakecase sortAlpha split splitList
		splitn squote sub subf substr swapcase ternary title toDate toDecimal toJson toPrettyJson toRawJson
		toString toStrings toYaml trim trimAll trimPrefix trimSuffix trimall trunc tuple typeIs typeIsLike
		typeOf uniq unixEpoch unset until untilStep untitle upper urlJoin urlParse urlquery values without
		wrap wrapWith`)
	if got := slices.Sorted(maps.Keys(funcMap)); !slices.Equal(got, want) {
		t.Errorf("template functions changed:\n got %v\nwant %v", got, want)
	}
	for _, name := range want {
		for _, bad := range []string{"env", "host", "dns", "lookup", "http", "url", "file", "secret", "configmap", "include", "tpl", "exec"} {
			if strings.Contains(strings.ToLower(name), bad) && name != "urlParse" && name != "urlJoin" && name != "urlquery" {
				t.Errorf("function %q looks like it reaches outside the template (%q)", name, bad)
			}
		}
	}
}

// FuzzRender renders arbitrary templates over fixed values: no panic, the
// output bound and the time bound hold whatever the template.
func FuzzRender(f *testing.F) {
	for _, text := range bombs {
		f.Add(text)
	}
	for _, text := range listBombs {
		f.Add(text)
	}
	for _, text := range []string{
		`{{ .user }}:{{ .password | b64enc }}`,
		`{{ range $k, $v := . }}{{ $k }}={{ $v | quote }}{{ "\n" }}{{ end }}`,
		`{{ dict "a" .user "b" (list 1 2 3) | toPrettyJson | indent 2 }}`,
		`{{ printf "%-10s|%5.2f" .user 3.14159 }}`,
		`{{ .port | atoi | add 1 }}`,
		`{{ regexReplaceAll "(a)" .user "$1$1" | upper | nindent 4 }}`,
	} {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		start := time.Now()
		res, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"k": text}}, fetched, Sources{})
		if took := time.Since(start); took > 10*maxRenderTime {
			t.Fatalf("render took %s", took)
		}
		if err != nil {
			if !errors.Is(err, ErrTemplate) {
				t.Fatalf("error is not a template error: %v", err)
			}
			return
		}
		if len(res.Data["k"]) > maxOutput {
			t.Fatalf("rendered %d bytes, over the %d byte bound", len(res.Data["k"]), maxOutput)
		}
	})
}
