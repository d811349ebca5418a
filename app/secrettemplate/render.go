// Package secrettemplate renders an ExternalSecret's target.template: the
// Secret's type, labels, annotations and data as Go templates over the
// fetched values, with upstream ESO's engine v2 semantics and a fixed,
// side-effect-free function set.
package secrettemplate

import (
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// ErrTemplate: a template cannot be parsed or rendered. Messages name the
// template, never the values it was rendered with.
var ErrTemplate = errors.New("template error")

// ErrInvalidTemplate: a template the object holds cannot be used as
// written: it does not parse, or one of its settings has a value eso does
// not know. Only an edit of the object fixes it; the values it renders and
// the templateFrom sources it reads cannot. It is ErrTemplate.
var ErrInvalidTemplate = fmt.Errorf("%w", ErrTemplate)

// ErrSourceNotFound: a ConfigMap or Secret templateFrom names does not
// exist (yet). eso does not watch them (it caches only the Secrets it
// manages), so the ExternalSecret is tried again soon rather than waiting
// for a change of its own.
var ErrSourceNotFound = fmt.Errorf("%w", ErrTemplate)

// Sources holds the templates templateFrom names, read by the caller from the
// ExternalSecret's namespace: ConfigMaps and Secrets by name, then by key.
type Sources struct {
	ConfigMaps map[string]map[string]string
	Secrets    map[string]map[string][]byte
	// Versions are "<Kind>/<name>=<resourceVersion>" of what was read, so a
	// caller can tell whether anything changed.
	Versions []string
}

// Result is what the template makes of the fetched data.
type Result struct {
	Type        corev1.SecretType
	Data        map[string][]byte
	Labels      map[string]string
	Annotations map[string]string
}

// Render applies tpl to data with a budget of its own. A nil template
// returns data unchanged.
func Render(tpl *esv1.ExternalSecretTemplate, data map[string][]byte, src Sources) (*Result, error) {
	return RenderWith(NewBudget(), tpl, data, src)
}

// RenderWith applies tpl to data, charging every template it executes to
// b: the budget of the sync it is part of, which may render more than once
// (a PushSecret over several Secrets).
func RenderWith(b *Budget, tpl *esv1.ExternalSecretTemplate, data map[string][]byte, src Sources) (*Result, error) {
	res := &Result{Type: corev1.SecretTypeOpaque, Data: data}
	if tpl == nil {
		return res, nil
	}
	if tpl.Type != "" {
		res.Type = tpl.Type
	}
	values := make(map[string]string, len(data))
	for k, v := range data {
		values[k] = string(v)
	}
	r := renderer{values: values, budget: b}

	// As upstream: templateFrom first, then data and metadata, so the
	// templates written in the ExternalSecret itself win. Keys are rendered in
	// order, so that with several errors the same one is reported each time.
	templated := map[string][]byte{}
	labels, annotations := map[string]string{}, map[string]string{}
	for i, from := range tpl.TemplateFrom {
		target, err := normalTarget(i, from.Target)
		if err != nil {
			return nil, err
		}
		kv, err := r.renderFrom(i, from, src)
		if err != nil {
			return nil, err
		}
		if err := decodeValues(i, from.ValuesDecodingStrategy, kv); err != nil {
			return nil, err
		}
		switch target {
		case esv1.TemplateTargetLabels:
			maps.Copy(labels, kv)
		case esv1.TemplateTargetAnnotations:
			maps.Copy(annotations, kv)
		default:
			for k, v := range kv {
				templated[k] = []byte(v)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(tpl.Data)) {
		out, err := r.render("data."+k, tpl.Data[k])
		if err != nil {
			return nil, err
		}
		templated[k] = []byte(out)
	}
	for _, k := range slices.Sorted(maps.Keys(tpl.Metadata.Labels)) {
		out, err := r.render("metadata.labels."+k, tpl.Metadata.Labels[k])
		if err != nil {
			return nil, err
		}
		labels[k] = out
	}
	for _, k := range slices.Sorted(maps.Keys(tpl.Metadata.Annotations)) {
		out, err := r.render("metadata.annotations."+k, tpl.Metadata.Annotations[k])
		if err != nil {
			return nil, err
		}
		annotations[k] = out
	}

	// As upstream: without data templates or templateFrom the fetched data
	// is kept as it is; with either, Replace keeps only the templated keys
	// (even when every templateFrom entry writes labels or annotations) and
	// Merge lays them over the data.
	if len(tpl.Data) > 0 || len(tpl.TemplateFrom) > 0 {
		if tpl.MergePolicy == esv1.MergePolicyMerge {
			merged := maps.Clone(data)
			maps.Copy(merged, templated)
			res.Data = merged
		} else {
			res.Data = templated
		}
	}
	res.Labels, res.Annotations = labels, annotations
	return res, nil
}

// normalTarget is a templateFrom target in its canonical spelling: upstream
// takes Data, Annotations and Labels in any letter case, and empty as Data.
func normalTarget(i int, target esv1.TemplateTarget) (esv1.TemplateTarget, error) {
	if target == "" {
		return esv1.TemplateTargetData, nil
	}
	for _, t := range []esv1.TemplateTarget{esv1.TemplateTargetData, esv1.TemplateTargetAnnotations, esv1.TemplateTargetLabels} {
		if strings.EqualFold(string(target), string(t)) {
			return t, nil
		}
	}
	return "", fmt.Errorf("%w: templateFrom[%d].target must be Data, Annotations or Labels", ErrInvalidTemplate, i)
}

// decodeValues applies a templateFrom entry's valuesDecodingStrategy to the
// values it rendered (never to their keys), as upstream: Base64 and
// Base64URL (padded) must decode; Auto tries both and else keeps the value;
// None or empty keep it. Errors name the key, never the value.
func decodeValues(i int, strategy esv1.DecodingStrategy, kv map[string]string) error {
	var encs []*base64.Encoding
	switch strategy {
	case esv1.DecodingBase64:
		encs = []*base64.Encoding{base64.StdEncoding}
	case esv1.DecodingBase64URL:
		encs = []*base64.Encoding{base64.URLEncoding}
	case esv1.DecodingAuto:
		encs = []*base64.Encoding{base64.StdEncoding, base64.URLEncoding}
	case esv1.DecodingNone, "":
		return nil
	default:
		return fmt.Errorf("%w: templateFrom[%d].valuesDecodingStrategy must be None, Base64, Base64URL or Auto", ErrInvalidTemplate, i)
	}
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		decoded := false
		for _, enc := range encs {
			if b, err := enc.DecodeString(kv[k]); err == nil {
				kv[k], decoded = string(b), true
				break
			}
		}
		if !decoded && strategy != esv1.DecodingAuto {
			return fmt.Errorf("%w: templateFrom[%d]: the rendered value of %q is not %s (valuesDecodingStrategy)", ErrTemplate, i, k, strategy)
		}
	}
	return nil
}

type renderer struct {
	values map[string]string
	// budget is shared by every template of one sync.
	budget *Budget
}

// maxOutput bounds what one template may render.
const maxOutput = 1 << 20

// render executes one template the object holds over the fetched values.
func (r renderer) render(name, text string) (string, error) {
	return r.renderAs(ErrInvalidTemplate, name, text)
}

// renderSource executes a template a templateFrom source holds: one that
// does not parse is the source's to fix, not the object's.
func (r renderer) renderSource(name, text string) (string, error) {
	return r.renderAs(ErrTemplate, name, text)
}

// renderAs executes text, reporting a text that does not parse as
// unparsable.
func (r renderer) renderAs(unparsable error, name, text string) (string, error) {
	t, err := compile(name, text, r.budget, unparsable)
	if err != nil {
		return "", err
	}
	return t.Execute(r.values)
}

// Template is a template with eso's function set whose output is bounded
// and whose execution errors are reported without their details: Go's
// template package prints the values it failed on ("range can't iterate
// over ..."), and those are secrets.
// Its executions are budgeted (see budget.go); a Template is not safe for
// concurrent use.
type Template struct {
	name   string
	t      *template.Template
	budget *budgetHolder
	// perExecute gives every Execute a fresh budget; otherwise the budget
	// is the render's, shared with its other templates.
	perExecute bool
}

// Compile parses text, named name in errors, a template the caller's
// object holds: a text that does not parse is ErrInvalidTemplate. Each
// Execute has a budget of its own.
func Compile(name, text string) (*Template, error) {
	return compile(name, text, nil, ErrInvalidTemplate)
}

// CompileWith is Compile for executions that all charge b, the budget of
// the sync they are part of: a template run once per key costs the sync,
// not each key, its steps, bytes and time.
func CompileWith(b *Budget, name, text string) (*Template, error) {
	return compile(name, text, b, ErrInvalidTemplate)
}

// compile parses text for executions charged to shared, or to a budget of
// their own when shared is nil. A text that does not parse is reported as
// unparsable: ErrInvalidTemplate when the object holds it, ErrTemplate when
// a source the object reads does.
func compile(name, text string, shared *Budget, unparsable error) (*Template, error) {
	t, err := template.New(name).Funcs(funcMap).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", unparsable, name, firstLine(err))
	}
	h := &budgetHolder{b: shared}
	instrument(t, h)
	return &Template{name: name, t: t, budget: h, perExecute: shared == nil}, nil
}

// Execute renders the template over data, at most maxOutput bytes, within
// the budget.
func (t *Template) Execute(data any) (string, error) {
	if t.perExecute {
		t.budget.b = NewBudget()
	}
	if err := t.budget.b.inTime(); err != nil {
		be := err.(*budgetExceeded)
		return "", fmt.Errorf("%w: %s: %s", be.class(), t.name, be.what)
	}
	b := limitedBuilder{budget: t.budget.b}
	t.budget.b.begin()
	err := t.t.Execute(&b, data)
	t.budget.b.end()
	if err != nil {
		if be, ok := budgetError(err); ok {
			return "", fmt.Errorf("%w: %s: %s", be.class(), t.name, be.what)
		}
		if errors.Is(err, errTooLarge) {
			return "", fmt.Errorf("%w: %s renders more than %d bytes", ErrTemplate, t.name, maxOutput)
		}
		return "", fmt.Errorf("%w: %s: %s", ErrTemplate, t.name, execFailure(err))
	}
	return b.String(), nil
}

var errTooLarge = errors.New("template output too large")

// limitedBuilder is a strings.Builder that refuses to grow past maxOutput,
// and charges what it holds to the budget: a template run once per key
// (a rewrite) outputs text no function produced.
type limitedBuilder struct {
	strings.Builder
	budget *Budget
}

func (b *limitedBuilder) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxOutput {
		return 0, errTooLarge
	}
	if err := b.budget.charge("the template's output", int64(len(p))); err != nil {
		return 0, err
	}
	return b.Builder.Write(p)
}

// renderFrom renders one templateFrom entry into keys and values.
func (r renderer) renderFrom(i int, from esv1.TemplateFrom, src Sources) (map[string]string, error) {
	out := map[string]string{}
	if from.Literal != nil {
		rendered, err := r.render(fmt.Sprintf("templateFrom[%d].literal", i), *from.Literal)
		if err != nil {
			return nil, err
		}
		return keysAndValues(fmt.Sprintf("templateFrom[%d].literal", i), rendered)
	}
	ref, templates, kind := from.ConfigMap, map[string]string{}, "ConfigMap"
	if from.ConfigMap != nil {
		cm, ok := src.ConfigMaps[from.ConfigMap.Name]
		if !ok {
			return nil, fmt.Errorf("%w: templateFrom[%d]: ConfigMap %s not found", ErrTemplate, i, from.ConfigMap.Name)
		}
		templates = cm
	} else if from.Secret != nil {
		ref, kind = from.Secret, "Secret"
		s, ok := src.Secrets[from.Secret.Name]
		if !ok {
			return nil, fmt.Errorf("%w: templateFrom[%d]: Secret %s not found", ErrTemplate, i, from.Secret.Name)
		}
		for k, v := range s {
			templates[k] = string(v)
		}
	} else {
		return nil, fmt.Errorf("%w: templateFrom[%d] names no source", ErrInvalidTemplate, i)
	}
	for _, item := range ref.Items {
		text, ok := templates[item.Key]
		if !ok {
			return nil, fmt.Errorf("%w: templateFrom[%d]: %s %s has no key %q", ErrTemplate, i, kind, ref.Name, item.Key)
		}
		if item.TemplateAs != "" && item.TemplateAs != esv1.TemplateScopeValues && item.TemplateAs != esv1.TemplateScopeKeysAndValues {
			return nil, fmt.Errorf("%w: templateFrom[%d]: templateAs must be Values or KeysAndValues", ErrInvalidTemplate, i)
		}
		name := fmt.Sprintf("templateFrom[%d].%s.%s", i, ref.Name, item.Key)
		rendered, err := r.renderSource(name, text)
		if err != nil {
			return nil, err
		}
		if item.TemplateAs == esv1.TemplateScopeKeysAndValues {
			kv, err := keysAndValues(name, rendered)
			if err != nil {
				return nil, err
			}
			maps.Copy(out, kv)
			continue
		}
		out[item.Key] = rendered
	}
	return out, nil
}

// keysAndValues reads a rendered YAML map of keys to values.
func keysAndValues(name, rendered string) (map[string]string, error) {
	var raw map[string]any
	if err := yaml.Unmarshal([]byte(rendered), &raw); err != nil {
		return nil, fmt.Errorf("%w: %s must render a YAML map of keys to values", ErrTemplate, name)
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		switch t := v.(type) {
		case string:
			out[k] = t
		default:
			b, err := yaml.Marshal(t)
			if err != nil {
				return nil, err
			}
			out[k] = strings.TrimSuffix(string(b), "\n")
		}
	}
	return out, nil
}

func firstLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// execLocation is the "template: name:line:col:" prefix of an execution error.
var execLocation = regexp.MustCompile(`^template: [^:]+:\d+:\d+: `)

// execFailure describes an execution error by its position only, plus the
// function that failed, if one did: never the values involved.
func execFailure(err error) string {
	msg := firstLine(err)
	where := "execution failed"
	if loc := execLocation.FindString(msg); loc != "" {
		where = "execution failed at " + strings.TrimSuffix(strings.TrimPrefix(loc, "template: "), ": ")
	}
	if fn := callError.FindStringSubmatch(msg); fn != nil {
		where += " in " + fn[1]
	}
	if strings.Contains(msg, "map has no entry for key") {
		if key := missingKey.FindStringSubmatch(msg); key != nil {
			return where + ": no fetched key " + key[1]
		}
	}
	return where + " (details withheld: they may contain secret values)"
}

var (
	callError  = regexp.MustCompile(`error calling ([A-Za-z0-9_]+):`)
	missingKey = regexp.MustCompile(`map has no entry for key ("[^"]*")`)
)
