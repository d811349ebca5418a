package pushsecret

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/app/secretkeys"
	"github.com/eso-dev/eso/app/secrettemplate"
)

// errBadEntry: the spec cannot be applied to the source as written (a key
// that is not there, two entries writing one remote secret). Retrying
// cannot fix it; a change of the spec or the source can.
var errBadEntry = errors.New("invalid push entry")

// target is a store a PushSecret pushes to, as entries see it.
type target struct {
	Kind, Name string
	Labels     map[string]string
}

// key is the store's key in status.syncedPushSecrets: "<Kind>/<name>".
func (t target) key() string { return t.Kind + "/" + t.Name }

// entry is one value pushed to one store.
type entry struct {
	// data is what status.syncedPushSecrets records: the source key (empty
	// for the whole Secret) and the remote secret.
	data  esv1alpha1.PushSecretData
	value []byte
	// whole, when set, makes value: a JSON object of several keys, made
	// only once the entries are counted (planner.build).
	whole *jsonValue
	// missing: a data entry whose key the source lacks. It is counted and
	// checked like the others but not pushed (upstream pushes the rest and
	// this one once its key appears).
	missing bool
}

// remoteID is an entry's key in status.syncedPushSecrets: the remote key,
// and "/<property>" when it sets one property.
func remoteID(ref esv1alpha1.PushSecretRemoteRef) string {
	if ref.Property != "" {
		return ref.RemoteKey + "/" + ref.Property
	}
	return ref.RemoteKey
}

// planner turns a PushSecret's spec and the data it pushes into each
// store's entries. Everything it makes is made once per sync, however many
// entries and stores use it: a key conversion, a dataTo entry's keys, a
// JSON value. Values are made last, after the entries are counted, and
// charged to the sync's budget before they are allocated; every key a
// conversion or a dataTo entry visits is a step of it.
type planner struct {
	spec   *esv1alpha1.PushSecretSpec
	data   map[string][]byte
	budget *secrettemplate.Budget

	converted map[esv1alpha1.ConversionStrategy]map[string][]byte
	// wholes are the whole Secret as JSON, with keys reversed or not.
	wholes map[bool]*jsonValue
	// named are the keys data entries push, which dataTo leaves to them.
	named map[string]bool
	// fixed are the data entries (every store gets them), dataErr why
	// they cannot be pushed and missingKeys which name a key the source
	// lacks; expanded the entries of each dataTo entry, by index, and
	// expandErr why one cannot.
	fixed       []entry
	dataErr     error
	missingKeys error
	expanded    map[int][]entry
	expandErr   map[int]error
}

func newPlanner(spec *esv1alpha1.PushSecretSpec, data map[string][]byte, b *secrettemplate.Budget) *planner {
	return &planner{spec: spec, data: data, budget: b,
		converted: map[esv1alpha1.ConversionStrategy]map[string][]byte{},
		wholes:    map[bool]*jsonValue{}, expanded: map[int][]entry{}, expandErr: map[int]error{}}
}

// entries is what the spec pushes to store t, by remoteID: data entries,
// then dataTo entries for the keys data does not name. Their JSON values
// are not made yet (see build). Errors name keys, never values.
func (p *planner) entries(t target) (map[string]entry, error) {
	if err := p.planData(); err != nil {
		return nil, err
	}
	out := make(map[string]entry, len(p.fixed))
	add := func(e entry) error {
		id := remoteID(e.data.Match.RemoteRef)
		if _, dup := out[id]; dup {
			return fmt.Errorf("%w: two entries push to %s of %s", errBadEntry, id, t.key())
		}
		if len(out) == maxEntries {
			return fmt.Errorf("%w: more than %d remote secrets over all stores", errBadEntry, maxEntries)
		}
		out[id] = e
		return nil
	}
	for _, e := range p.fixed {
		if err := add(e); err != nil {
			return nil, err
		}
	}
	for i, dt := range p.spec.DataTo {
		ok, err := appliesTo(dt.StoreRef, t)
		if err != nil {
			return nil, fmt.Errorf("dataTo[%d].storeRef: %w", i, err)
		}
		if !ok {
			continue
		}
		entries, err := p.expand(i)
		if err != nil {
			return nil, fmt.Errorf("dataTo[%d]: %w", i, err)
		}
		for _, e := range entries {
			if err := add(e); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// planData plans the data entries, once.
func (p *planner) planData() error {
	if p.named != nil {
		return p.dataErr
	}
	p.named = map[string]bool{}
	for i, d := range p.spec.Data {
		keyed, err := p.convert(d.ConversionStrategy)
		if err != nil {
			p.dataErr = err
			return err
		}
		e := entry{data: d}
		if d.Match.SecretKey == "" {
			reversed := d.ConversionStrategy == esv1alpha1.ConversionReverseUnicode
			if p.wholes[reversed] == nil {
				p.wholes[reversed] = &jsonValue{data: keyed}
			}
			e.whole = p.wholes[reversed]
		} else {
			v, ok := keyed[d.Match.SecretKey]
			if !ok {
				e.missing = true
				p.missingKeys = errors.Join(p.missingKeys, fmt.Errorf("data[%d]: %w: the Secret has no key %q", i, errBadEntry, d.Match.SecretKey))
			}
			e.value = v
		}
		p.named[d.Match.SecretKey] = true
		p.fixed = append(p.fixed, e)
	}
	return nil
}

// convert applies a conversionStrategy to the source's keys, once per
// strategy.
func (p *planner) convert(strategy esv1alpha1.ConversionStrategy) (map[string][]byte, error) {
	if strategy != esv1alpha1.ConversionReverseUnicode {
		return p.data, nil
	}
	if out, ok := p.converted[strategy]; ok {
		return out, nil
	}
	if err := p.budget.Steps("conversionStrategy", len(p.data)); err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(p.data))
	for k, v := range p.data {
		out[secretkeys.ReverseUnicode(k)] = v
	}
	p.converted[strategy] = out
	return out, nil
}

// expand turns dataTo entry i into entries, once: each matching key to the
// remote secret its rewrites name, or all of them together to remoteKey.
// Keys named by data entries are left to those.
func (p *planner) expand(i int) ([]entry, error) {
	if out, ok := p.expanded[i]; ok {
		return out, nil
	}
	if err, ok := p.expandErr[i]; ok {
		return nil, err
	}
	out, err := p.expandOnce(i)
	if err != nil {
		p.expandErr[i] = err
		return nil, err
	}
	p.expanded[i] = out
	return out, nil
}

func (p *planner) expandOnce(i int) ([]entry, error) {
	dt := p.spec.DataTo[i]
	data, err := p.convert(dt.ConversionStrategy)
	if err != nil {
		return nil, err
	}
	if err := p.budget.Steps(fmt.Sprintf("dataTo[%d]", i), len(data)); err != nil {
		return nil, err
	}
	var match *regexp.Regexp
	if dt.Match != nil && dt.Match.RegExp != "" {
		if match, err = regexp.Compile(dt.Match.RegExp); err != nil {
			return nil, fmt.Errorf("%w: match.regexp: %v", errBadEntry, err)
		}
	}
	selected := map[string][]byte{}
	for k, v := range data {
		if !p.named[k] && (match == nil || match.MatchString(k)) {
			selected[k] = v
		}
	}
	var out []entry
	if dt.RemoteKey != "" {
		out = []entry{{whole: &jsonValue{data: selected}, data: esv1alpha1.PushSecretData{Metadata: dt.Metadata,
			Match: esv1alpha1.PushSecretMatch{RemoteRef: esv1alpha1.PushSecretRemoteRef{RemoteKey: dt.RemoteKey}}}}}
	} else {
		// Rename a copy keyed by remote key, remembering each one's source key.
		sourceOf := make(map[string][]byte, len(selected))
		for k := range selected {
			sourceOf[k] = []byte(k)
		}
		for j, rule := range dt.Rewrite {
			rename, err := secretkeys.Renamer(p.budget, rule.Regexp, rule.Transform)
			if err != nil {
				return nil, fmt.Errorf("%w: rewrite[%d]: %v", errBadEntry, j, err)
			}
			if sourceOf, err = secretkeys.RenameAll(p.budget, rename, sourceOf); err != nil {
				return nil, fmt.Errorf("%w: rewrite[%d]: %v", errBadEntry, j, err)
			}
		}
		out = make([]entry, 0, len(sourceOf))
		for _, remote := range slices.Sorted(maps.Keys(sourceOf)) {
			key := string(sourceOf[remote])
			out = append(out, entry{value: selected[key], data: esv1alpha1.PushSecretData{Metadata: dt.Metadata,
				Match: esv1alpha1.PushSecretMatch{SecretKey: key, RemoteRef: esv1alpha1.PushSecretRemoteRef{RemoteKey: remote}}}})
		}
	}
	return out, nil
}

// build makes the JSON values of planned entries, each once however many
// entries and stores share it, charging its exact size first.
func (p *planner) build(planned map[string]map[string]entry) error {
	for _, entries := range planned {
		for id, e := range entries {
			if e.whole == nil {
				continue
			}
			v, err := e.whole.make(p.budget, id)
			if err != nil {
				return err
			}
			e.value = v
			entries[id] = e
		}
	}
	return nil
}

// jsonValue is a whole Secret (or a dataTo entry's keys) pushed as one JSON
// object, made at most once.
type jsonValue struct {
	data map[string][]byte
	made []byte
}

func (j *jsonValue) make(b *secrettemplate.Budget, id string) ([]byte, error) {
	if j.made == nil {
		if err := b.Produce("the JSON value of "+id, wholeSecretSize(j.data)); err != nil {
			return nil, err
		}
		j.made = wholeSecret(j.data)
	}
	return j.made, nil
}

// appliesTo reports whether a dataTo entry's storeRef names or selects t.
func appliesTo(ref *esv1alpha1.PushSecretStoreRef, t target) (bool, error) {
	if ref == nil {
		return false, nil
	}
	if kindOf(*ref) != t.Kind {
		return false, nil
	}
	if ref.Name != "" {
		return ref.Name == t.Name, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(ref.LabelSelector)
	if err != nil {
		return false, err
	}
	return sel.Matches(labels.Set(t.Labels)), nil
}

// kindOf is a store reference's kind, SecretStore when absent.
func kindOf(ref esv1alpha1.PushSecretStoreRef) string {
	if ref.Kind == "" {
		return "SecretStore"
	}
	return ref.Kind
}
