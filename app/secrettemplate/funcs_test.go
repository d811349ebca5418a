package secrettemplate

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// sprigCase is a template over sprigData and what it renders.
type sprigCase struct {
	text    string
	want    string
	wantErr bool
	// own: the function is eso's, and differs from sprig's here (sprig's
	// reads the clock or the local zone, panics or returns noise).
	own bool
}

// sprigData: $t is 2024-03-10T12:00:00Z.
const sprigTime = `{{ $t := mustToDate "2006-01-02T15:04:05Z07:00" "2024-03-10T12:00:00Z" }}`

// TestSprigAdditions: the sprig functions allowed beside the first set,
// family by family, give what sprig documents (and, unless eso's own
// differs on purpose, what sprig itself gives).
func TestSprigAdditions(t *testing.T) {
	encrypted := must(sprig.TxtFuncMap()["encryptAES"].(func(string, string) (string, error))("k3y", "s3cr3t plain text"))
	_, _, certPEM, keyPEM := selfSigned(t, "custom", nil, nil)
	data := map[string]string{
		"aes":  encrypted,
		"cert": base64.StdEncoding.EncodeToString([]byte(certPEM)),
		"key":  base64.StdEncoding.EncodeToString([]byte(keyPEM)),
	}
	families := map[string][]sprigCase{
		"strings": {
			{text: `{{ trimall "$" "$5.00$" }}`, want: "5.00"},
			{text: `{{ hello }}`, want: "Hello!"},
		},
		"regular expressions": {
			{text: `{{ mustRegexMatch "^[a-z]+$" "abc" }}`, want: "true"},
			{text: `{{ mustRegexMatch "[" "a" }}`, wantErr: true},
			{text: `{{ mustRegexFindAll "[0-9]" "a1b2c3" 2 }}`, want: "[1 2]"},
			{text: `{{ mustRegexFind "[0-9]+" "ab12cd34" }}`, want: "12"},
			{text: `{{ mustRegexReplaceAll "a(x*)b" "-ab-axxb-" "${1}W" }}`, want: "-W-xxW-"},
			{text: `{{ mustRegexReplaceAllLiteral "a(x*)b" "-ab-axxb-" "${1}" }}`, want: "-${1}-${1}-"},
			{text: `{{ mustRegexSplit "z+" "pizza" -1 }}`, want: "[pi a]"},
		},
		"float math": {
			{text: `{{ add1f 1.5 }}`, want: "2.5"},
			{text: `{{ addf 1.5 2 2 }}`, want: "5.5"},
			{text: `{{ subf 10 1.5 2 }}`, want: "6.5"},
			{text: `{{ mulf 1.5 2 2 }}`, want: "6"},
			{text: `{{ divf 10 4 }}`, want: "2.5"},
			{text: `{{ maxf 1 2.5 3 }}`, want: "3"},
			{text: `{{ minf 1 2.5 -3 }}`, want: "-3"},
			{text: `{{ biggest 1 5 3 }}`, want: "5"},
			{text: `{{ toDecimal "0777" }}`, want: "511"},
			{text: `{{ round 3.14159 2 }} {{ floor 1.5 }} {{ ceil 1.5 }}`, want: "3.14 1 2"},
		},
		"defaults and types": {
			{text: `{{ all 1 "a" true }} {{ all 1 "" }}`, want: "true false"},
			{text: `{{ any 0 "" "x" }} {{ any 0 "" }}`, want: "true false"},
			{text: `{{ typeIsLike "int" 1 }} {{ typeIsLike "[]interface {}" (list 1) }} {{ typeIsLike "string" 1 }}`, want: "true true false"},
		},
		"lists": {
			{text: `{{ tuple 1 "a" }}`, want: "[1 a]"},
			{text: `{{ push (list 1 2) 3 }} {{ mustPush (list 1) 2 }} {{ mustAppend (list 1) 2 }}`, want: "[1 2 3] [1 2] [1 2]"},
			{text: `{{ mustPrepend (list 1 2) 0 }}`, want: "[0 1 2]"},
			{text: `{{ mustFirst (list 1 2) }} {{ mustLast (list 1 2) }}`, want: "1 2"},
			{text: `{{ mustRest (list 1 2 3) }} {{ mustInitial (list 1 2 3) }} {{ mustReverse (list 1 2 3) }}`, want: "[2 3] [1 2] [3 2 1]"},
			{text: `{{ mustWithout (list 1 2 3) 2 }} {{ mustHas 2 (list 1 2) }} {{ mustCompact (list 1 "" 2) }}`, want: "[1 3] true [1 2]"},
			{text: `{{ mustSlice (list 1 2 3 4) 1 3 }} {{ mustChunk 2 (list 1 2 3) }}`, want: "[2 3] [[1 2] [3]]"},
			{text: `{{ mustUniq (list 1 1 2 "1") }} {{ uniq (list (list 1) (list 1) (dict "a" 1) (dict "a" 1)) }}`, want: "[1 2 1] [[1] map[a:1]]"},
			{text: `{{ mustFirst "x" }}`, wantErr: true},
			{text: `{{ mustReverse 1 }}`, wantErr: true},
		},
		"dicts": {
			{text: `{{ mustMerge (dict "a" 1) (dict "a" 2 "b" 3) | toJson }}`, want: `{"a":1,"b":3}`},
			{text: `{{ mustMergeOverwrite (dict "a" 1) (dict "a" 2) | toJson }}`, want: `{"a":2}`},
			{text: `{{ mustDeepCopy (dict "a" (list 1)) | toJson }}`, want: `{"a":[1]}`},
		},
		"sequences": {
			{text: `{{ until 5 }} {{ until -3 }} {{ until 0 }}`, want: "[0 1 2 3 4] [0 -1 -2] []"},
			{text: `{{ untilStep 3 9 2 }} {{ untilStep 0 -10 -4 }} {{ untilStep 0 10 0 }}`, want: "[3 5 7] [0 -4 -8] []"},
			{text: `{{ seq 5 }}|{{ seq -1 }}|{{ seq 5 2 }}|{{ seq 0 2 10 }}|{{ seq 10 -2 0 }}|{{ seq 10 2 0 }}|{{ seq }}`,
				want: "1 2 3 4 5|1 0 -1|5 4 3 2|0 2 4 6 8 10|10 8 6 4 2 0||"},
			{text: `{{ range $i := until 3 }}{{ $i }}{{ end }}`, want: "012"},
		},
		"dates": {
			{text: sprigTime + `{{ unixEpoch $t }}`, want: "1710072000"},
			{text: `{{ mustToDate "2006-01-02" "not a date" }}`, wantErr: true},
			{text: sprigTime + `{{ (date_modify "90m" $t).UTC.Format "15:04" }}`, want: "13:30"},
			{text: sprigTime + `{{ (mustDateModify "-1h" $t).UTC.Format "15:04" }} {{ (must_date_modify "1h" $t).UTC.Format "15:04" }}`, want: "11:00 13:00"},
			{text: sprigTime + `{{ mustDateModify "soon" $t }}`, wantErr: true},
			{text: `{{ durationRound "2h10m5s" }} {{ durationRound "400h" }}`, want: "2h 16d"},
			// eso's: UTC where sprig formats in the local zone, and a
			// refusal where sprig formats or measures from now.
			{text: sprigTime + `{{ htmlDate $t }} {{ htmlDateInZone $t "UTC" }}`, want: "2024-03-10 2024-03-10", own: true},
			{text: sprigTime + `{{ date_in_zone "2006-01-02 15:04" $t "UTC" }}`, want: "2024-03-10 12:00"},
			{text: `{{ htmlDate "yesterday" }}`, wantErr: true, own: true},
			{text: sprigTime + `{{ durationRound $t }}`, wantErr: true, own: true},
		},
		"paths": {
			{text: `{{ osBase "/a/b.txt" }} {{ osDir "/a/b.txt" }} {{ osExt "/a/b.txt" }} {{ osClean "/a/../b" }} {{ osIsAbs "a" }}`,
				want: "b.txt /a .txt /b false"},
		},
		"crypto": {
			{text: `{{ decryptAES "k3y" .aes }}`, want: "s3cr3t plain text"},
			{text: `{{ decryptAES "k3y" "" }}`, want: ""},
			{text: `{{ decryptAES "k3y" "bm90IGJsb2Nrcw==" }}`, wantErr: true, own: true},
			{text: `{{ (buildCustomCert .cert .key).Cert | sha256sum }}`, want: fmt.Sprintf("%x", sha256.Sum256([]byte(certPEM)))},
			{text: `{{ buildCustomCert .cert "bm90IGEga2V5" }}`, wantErr: true},
		},
	}
	for family, cases := range families {
		for _, c := range cases {
			t.Run(family+"/"+c.text, func(t *testing.T) {
				tpl, err := Compile("t", c.text)
				if err != nil {
					t.Fatal(err)
				}
				got, err := tpl.Execute(data)
				if c.wantErr != (err != nil) || got != c.want {
					t.Fatalf("= %q, %v; want %q (error: %v)", got, err, c.want, c.wantErr)
				}
				if c.own {
					return
				}
				// sprig itself, without eso's budget.
				st := template.Must(template.New("t").Funcs(sprig.TxtFuncMap()).Parse(c.text))
				var b strings.Builder
				err = st.Execute(&b, data)
				if c.wantErr != (err != nil) || (!c.wantErr && b.String() != c.want) {
					t.Errorf("sprig gives %q, %v", b.String(), err)
				}
			})
		}
	}
}

// TestListBuildersMatchSprig: until, untilStep and seq give sprig's lists
// for every small start, stop and step.
func TestListBuildersMatchSprig(t *testing.T) {
	fm := sprig.TxtFuncMap()
	sUntil, sStep, sSeq := fm["until"].(func(int) []int), fm["untilStep"].(func(int, int, int) []int), fm["seq"].(func(...int) string)
	r := []int{-7, -3, -2, -1, 0, 1, 2, 3, 7}
	for _, a := range r {
		if got := must(until(a)); !slices.Equal(got, sUntil(a)) {
			t.Errorf("until %d = %v, sprig %v", a, got, sUntil(a))
		}
		if got := must(seq(a)); got != sSeq(a) {
			t.Errorf("seq %d = %q, sprig %q", a, got, sSeq(a))
		}
		for _, b := range r {
			if got := must(seq(a, b)); got != sSeq(a, b) {
				t.Errorf("seq %d %d = %q, sprig %q", a, b, got, sSeq(a, b))
			}
			for _, c := range r {
				if got := must(untilStep(a, b, c)); !slices.Equal(got, sStep(a, b, c)) {
					t.Errorf("untilStep %d %d %d = %v, sprig %v", a, b, c, got, sStep(a, b, c))
				}
				if got := must(seq(a, b, c)); got != sSeq(a, b, c) {
					t.Errorf("seq %d %d %d = %q, sprig %q", a, b, c, got, sSeq(a, b, c))
				}
				if n, _ := listSize("untilStep", []int{a, b, c}); n != uint64(len(sStep(a, b, c))) {
					t.Errorf("listSize untilStep %d %d %d = %d", a, b, c, n)
				}
			}
		}
	}
	if got := must(seq(1, 2, 3, 4)); got != "" {
		t.Errorf("seq of four numbers = %q", got)
	}
	// sprig's untilStep loops for ever once a step passes the largest int.
	if got := must(untilStep(0, math.MaxInt, math.MaxInt/2+1)); !slices.Equal(got, []int{0, math.MaxInt/2 + 1}) {
		t.Errorf("untilStep near the largest int = %v", got)
	}
	if got := must(untilStep(0, math.MinInt, math.MinInt)); !slices.Equal(got, []int{0}) {
		t.Errorf("untilStep to the smallest int = %v", got)
	}
}

// TestUniqMatchesSprig: eso's linear uniq keeps what sprig's keeps.
func TestUniqMatchesSprig(t *testing.T) {
	sUniq := sprig.TxtFuncMap()["mustUniq"].(func(any) ([]any, error))
	nan := math.NaN()
	negZero := math.Copysign(0, -1)
	for _, l := range []any{
		[]any{}, []int{3, 1, 3, 2, 1}, []string{"b", "a", "b"},
		[]any{1, int64(1), 1.0, "1", true, nil, nil, 1},
		[]any{nan, nan, 0.0, negZero, 0.0},
		[]any{map[string]any{"a": 1}, map[string]any{"a": 1}, map[string]any{"a": 2}, map[string]any(nil), map[string]any{}},
		[]any{[]any{1, "x"}, []any{1, "x"}, []any{"x", 1}, []any(nil), []any{}, []any{nil}},
		[]any{[]any{"astringb", "c"}, []any{"a", "stringbc"}, []any{"astringb", "c"}},
		[2]any{time.Unix(5, 0).UTC(), time.Unix(5, 0).UTC()},
	} {
		want, _ := sUniq(l)
		got, err := uniq(l)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) || len(got) != len(want) {
			t.Errorf("uniq %v = %v, %v; sprig %v", l, got, err, want)
		}
	}
	if _, err := uniq("not a list"); err == nil {
		t.Error("uniq of a string")
	}
}

// TestUniqOfLongListsStaysInTheBudget: sprig's uniq compares every element
// with every kept one: for these lists, hours. eso's renders them within
// the render's time bound.
func TestUniqOfLongListsStaysInTheBudget(t *testing.T) {
	for name, text := range map[string]string{
		"numbers": `{{ len (uniq (until 200000)) }}`,
		"dicts": `{{ $j := regexReplaceAll "(\\d+)" (seq 1 20000) "{\"a\":$1}," }}` +
			`{{ len (mustUniq (fromJson (printf "[%s{\"a\":1}]" $j))) }}`,
	} {
		t.Run(name, func(t *testing.T) {
			res, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"k": text}}, fetched, Sources{})
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if got := string(res.Data["k"]); got != map[string]string{"numbers": "200000", "dicts": "20000"}[name] {
				t.Errorf("= %s", got)
			}
		})
	}
}

// listBombs build a large output from a small input; each must be refused
// by the render budget before it allocates.
var listBombs = map[string]string{
	"until a billion":                 `{{ $x := until 1000000000 }}`,
	"until minus a billion":           `{{ $x := until -1000000000 }}`,
	"untilStep a billion":             `{{ $x := untilStep 0 1000000000 1 }}`,
	"untilStep down a billion":        `{{ $x := untilStep 0 -1000000000 -1 }}`,
	"untilStep the whole int range":   `{{ $x := untilStep -9223372036854775808 9223372036854775807 1 }}`,
	"seq a billion":                   `{{ $x := seq 1000000000 }}`,
	"seq 1 a billion":                 `{{ $x := seq 1 1000000000 }}`,
	"seq 0 1 a billion":               `{{ $x := seq 0 1 1000000000 }}`,
	"range over until":                `{{ range until 1000000000 }}{{ end }}`,
	"join with a long separator":      `{{ $x := join (repeat 4096 "x") (until 100000) }}`,
	"printf width over a list":        `{{ $x := printf "%4096v" (until 100000) }}`,
	"seq in a range of seqs":          `{{ range until 100 }}{{ $x := seq 1 100000 }}{{ end }}`,
	"mustRegexReplaceAll amplifying":  `{{ $x := mustRegexReplaceAll "" (repeat 4096 "x") (repeat 4096 "$0") }}`,
	"tuple of shared lists, printed":  `{{ $l := until 100000 }}{{ $x := print (tuple $l $l $l $l $l $l $l $l $l $l $l) }}`,
	"mustAppend of shared lists, all": `{{ $l := until 100000 }}{{ $x := toJson (mustAppend (list $l $l $l $l $l $l $l $l $l $l) $l) }}`,
}

// TestListBuildersAreRefusedByTheBudget: until, untilStep, seq and the
// functions that multiply their lists are refused by the render budget,
// quickly and in little memory, not by eso running out of memory.
func TestListBuildersAreRefusedByTheBudget(t *testing.T) {
	for name, text := range listBombs {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"k": text}}, fetched, Sources{})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrBudget) {
				t.Fatalf("err = %v, want the render budget", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
		})
	}
	_, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"k": `{{ $x := seq 1 1000000000 }}`}}, fetched, Sources{})
	if err == nil || !strings.Contains(err.Error(), "seq would take the bytes produced past") {
		t.Errorf("the refusal names the function and the bound: %v", err)
	}
}

// TestExcludedSprigFunctionsAreRefusedAtParse: a template calling a sprig
// function left out on purpose does not parse, and the error names it.
func TestExcludedSprigFunctionsAreRefusedAtParse(t *testing.T) {
	for name, why := range excluded {
		if why == "" {
			t.Errorf("%s is excluded without a reason", name)
		}
		_, err := Compile("t", "{{ "+name+" }}")
		if !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), fmt.Sprintf("function %q not defined", name)) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestEverySprigFunctionIsDecided: each of sprig's functions is allowed
// (sprig's or eso's version) or excluded with a reason, never both, so a
// sprig upgrade cannot add one unreviewed.
func TestEverySprigFunctionIsDecided(t *testing.T) {
	for _, name := range slices.Sorted(maps.Keys(sprig.TxtFuncMap())) {
		_, in := funcMap[name]
		_, out := excluded[name]
		if in == out {
			t.Errorf("sprig's %s is allowed: %v, excluded: %v", name, in, out)
		}
	}
	for name := range excluded {
		if _, ok := sprig.TxtFuncMap()[name]; !ok {
			t.Errorf("excluded names %s, which sprig does not have", name)
		}
	}
}

// TestSplittersAreChargedBeforeTheySplit: split, splitList, splitn,
// regexSplit and regexFindAll over a long value are refused before they
// build a piece per separator or match (a million pieces of a 1 MiB value
// would take about 100 MiB before the budget saw them); the regexp ones
// work over a long value given a count, and all of them over a short one.
func TestSplittersAreChargedBeforeTheySplit(t *testing.T) {
	const long = `{{ $s := repeat 4096 (repeat 256 "x") }}`
	for name, call := range map[string]string{
		"split":            `split "" $s`,
		"splitList":        `splitList "x" $s`,
		"splitn":           `splitn "" 2000000 $s`,
		"regexSplit":       `regexSplit "" $s -1`,
		"mustRegexSplit":   `mustRegexSplit "x" $s -1`,
		"regexFindAll":     `regexFindAll "x" $s -1`,
		"mustRegexFindAll": `mustRegexFindAll "." $s -1`,
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"k": long + `{{ $p := ` + call + ` }}`}}, fetched, Sources{})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), name) {
				t.Fatalf("err = %v, want the render budget naming %s", err, name)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
				t.Errorf("allocated %d MiB before refusing", alloc>>20)
			}
			if strings.HasSuffix(call, "-1") {
				bounded := long + `{{ ` + strings.TrimSuffix(call, "-1") + `3 | len }}`
				if out, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"k": bounded}}, fetched, Sources{}); err != nil || string(out.Data["k"]) != "3" {
					t.Errorf("with a count over a long value: %q, %v", out.Data["k"], err)
				}
			}
			short := strings.ReplaceAll(call, "$s", `"a,b,c"`)
			short = strings.NewReplacer(`"x"`, `","`, `"."`, `","`, `""`, `","`).Replace(short)
			if _, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"k": `{{ ` + short + ` | toJson }}`}}, fetched, Sources{}); err != nil {
				t.Errorf("%s over a short value: %v", short, err)
			}
		})
	}
}

// BenchmarkUniq: eso's uniq against sprig's on 20,000 distinct numbers;
// sprig's compares each element with every one kept so far.
func BenchmarkUniq(b *testing.B) {
	list := make([]any, 20000)
	for i := range list {
		list[i] = i
	}
	sprigUniq := sprig.TxtFuncMap()["uniq"].(func(any) []any)
	b.Run("eso", func(b *testing.B) {
		for b.Loop() {
			if out, err := uniq(list); err != nil || len(out) != len(list) {
				b.Fatal(len(out), err)
			}
		}
	})
	b.Run("sprig", func(b *testing.B) {
		for b.Loop() {
			if out := sprigUniq(list); len(out) != len(list) {
				b.Fatal(len(out))
			}
		}
	})
}

// TestEscapersAreChargedBeforeTheyRun: functions that escape make a byte
// up to six, so they are charged six times their input before they run: a
// value of control bytes through them is refused without the copies.
func TestEscapersAreChargedBeforeTheyRun(t *testing.T) {
	values := map[string][]byte{"v": bytes.Repeat([]byte{1}, 2<<20)}
	for _, fn := range []string{"js", "html", "toJson", "mustToJson", "toRawJson", "toPrettyJson", "quote", "urlquery"} {
		t.Run(fn, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"k": `{{ $x := ` + fn + ` .v }}{{ $y := ` + fn + ` .v }}`}}, values, Sources{})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrBudget) {
				t.Fatalf("err = %v, want the budget", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 24<<20 {
				t.Errorf("allocated %d MiB before refusing", alloc>>20)
			}
		})
	}
}
