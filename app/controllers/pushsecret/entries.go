package pushsecret

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/app/secretkeys"
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
}

// remoteID is an entry's key in status.syncedPushSecrets: the remote key,
// and "/<property>" when it sets one property.
func remoteID(ref esv1alpha1.PushSecretRemoteRef) string {
	if ref.Property != "" {
		return ref.RemoteKey + "/" + ref.Property
	}
	return ref.RemoteKey
}

// desiredEntries is what spec pushes of the Secret data to store t, by
// remoteID: data entries, then dataTo entries for the keys data does not
// name. Errors name keys, never values.
func desiredEntries(spec *esv1alpha1.PushSecretSpec, data map[string][]byte, t target) (map[string]entry, error) {
	out := map[string]entry{}
	add := func(e entry) error {
		id := remoteID(e.data.Match.RemoteRef)
		if _, dup := out[id]; dup {
			return fmt.Errorf("%w: two entries push to %s of %s", errBadEntry, id, t.key())
		}
		out[id] = e
		return nil
	}
	named := map[string]bool{}
	for i, d := range spec.Data {
		keyed := convert(d.ConversionStrategy, data)
		value, err := valueOf(keyed, d.Match.SecretKey)
		if err != nil {
			return nil, fmt.Errorf("data[%d]: %w", i, err)
		}
		named[d.Match.SecretKey] = true
		if err := add(entry{data: d, value: value}); err != nil {
			return nil, err
		}
	}
	for i, dt := range spec.DataTo {
		ok, err := appliesTo(dt.StoreRef, t)
		if err != nil {
			return nil, fmt.Errorf("dataTo[%d].storeRef: %w", i, err)
		}
		if !ok {
			continue
		}
		entries, err := expandDataTo(dt, convert(dt.ConversionStrategy, data), named)
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

// convert applies a conversionStrategy to the source's keys.
func convert(strategy esv1alpha1.ConversionStrategy, data map[string][]byte) map[string][]byte {
	if strategy != esv1alpha1.ConversionReverseUnicode {
		return data
	}
	out := make(map[string][]byte, len(data))
	for k, v := range data {
		out[secretkeys.ReverseUnicode(k)] = v
	}
	return out
}

// valueOf is one key's value, or the whole Secret as a JSON object of its
// keys when key is empty.
func valueOf(data map[string][]byte, key string) ([]byte, error) {
	if key == "" {
		return wholeSecret(data)
	}
	v, ok := data[key]
	if !ok {
		return nil, fmt.Errorf("%w: the Secret has no key %q", errBadEntry, key)
	}
	return v, nil
}

// wholeSecret is data as one JSON object of strings, as upstream pushes it.
func wholeSecret(data map[string][]byte) ([]byte, error) {
	obj := make(map[string]string, len(data))
	for k, v := range data {
		obj[k] = string(v)
	}
	return json.Marshal(obj)
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

// expandDataTo turns one dataTo entry into entries: each matching key to
// the remote secret its rewrites name, or all of them together to
// remoteKey. Keys named by data entries are left to those.
func expandDataTo(dt esv1alpha1.PushSecretDataTo, data map[string][]byte, named map[string]bool) ([]entry, error) {
	var match *regexp.Regexp
	if dt.Match != nil && dt.Match.RegExp != "" {
		var err error
		if match, err = regexp.Compile(dt.Match.RegExp); err != nil {
			return nil, fmt.Errorf("%w: match.regexp: %v", errBadEntry, err)
		}
	}
	selected := map[string][]byte{}
	for k, v := range data {
		if !named[k] && (match == nil || match.MatchString(k)) {
			selected[k] = v
		}
	}
	if dt.RemoteKey != "" {
		value, err := wholeSecret(selected)
		if err != nil {
			return nil, err
		}
		return []entry{{value: value, data: esv1alpha1.PushSecretData{Metadata: dt.Metadata,
			Match: esv1alpha1.PushSecretMatch{RemoteRef: esv1alpha1.PushSecretRemoteRef{RemoteKey: dt.RemoteKey}}}}}, nil
	}
	// Rename a copy keyed by remote key, remembering each one's source key.
	sourceOf := make(map[string][]byte, len(selected))
	for k := range selected {
		sourceOf[k] = []byte(k)
	}
	for i, rule := range dt.Rewrite {
		rename, err := secretkeys.Renamer(rule.Regexp, rule.Transform)
		if err != nil {
			return nil, fmt.Errorf("%w: rewrite[%d]: %v", errBadEntry, i, err)
		}
		if sourceOf, err = secretkeys.RenameAll(rename, sourceOf); err != nil {
			return nil, fmt.Errorf("%w: rewrite[%d]: %v", errBadEntry, i, err)
		}
	}
	out := make([]entry, 0, len(sourceOf))
	for _, remote := range slices.Sorted(maps.Keys(sourceOf)) {
		key := string(sourceOf[remote])
		out = append(out, entry{value: selected[key], data: esv1alpha1.PushSecretData{Metadata: dt.Metadata,
			Match: esv1alpha1.PushSecretMatch{SecretKey: key, RemoteRef: esv1alpha1.PushSecretRemoteRef{RemoteKey: remote}}}})
	}
	return out, nil
}

// kindOf is a store reference's kind, SecretStore when absent.
func kindOf(ref esv1alpha1.PushSecretStoreRef) string {
	if ref.Kind == "" {
		return "SecretStore"
	}
	return ref.Kind
}
