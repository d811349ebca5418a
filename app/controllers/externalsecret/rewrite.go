package externalsecret

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/secretkeys"
	"github.com/eso-dev/eso/app/secrettemplate"
)

// errBadRewrite: a rewrite rule cannot be applied to the keys or values it
// met (two keys renamed to one, a value that is not JSON).
var errBadRewrite = errors.New("invalid rewrite")

// errInvalidRewrite: a rewrite rule cannot be applied to anything: its
// regexp or transform template does not compile. Only an edit of the
// ExternalSecret fixes it. It is errBadRewrite.
var errInvalidRewrite = fmt.Errorf("%w", errBadRewrite)

// rewrite applies a dataFrom entry's rewrites to the keys (regexp, transform)
// or values (merge) it produced, in order, charging b, the sync's budget.
// Errors name keys, never values.
func rewrite(b *secrettemplate.Budget, rules []esv1.ExternalSecretRewrite, in map[string][]byte) (map[string][]byte, error) {
	out := in
	for i, rule := range rules {
		var err error
		sentinel := errBadRewrite
		if rule.Merge != nil {
			out, err = mergeValues(b, rule.Merge, out)
		} else {
			var rename func(string) (string, error)
			if rename, err = secretkeys.Renamer(b, rule.Regexp, rule.Transform); err != nil {
				sentinel = errInvalidRewrite
			} else {
				out, err = secretkeys.RenameAll(b, rename, out)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: rewrite[%d]: %v", sentinel, i, err)
		}
	}
	return out, nil
}

// mergeValues merges the JSON object values of every key into one object.
// Keys merge in name order, then the priority keys from lowest to highest, so
// the highest priority wins; a conflict between keys without priority fails
// under conflictPolicy Error.
func mergeValues(b *secrettemplate.Budget, m *esv1.ExternalSecretRewriteMerge, in map[string][]byte) (map[string][]byte, error) {
	rank := map[string]int{} // priority rank: 1 is the highest
	for i, k := range m.Priority {
		if _, ok := in[k]; !ok {
			if m.PriorityPolicy == "IgnoreNotFound" {
				continue
			}
			return nil, fmt.Errorf("merge.priority names key %q, which is not there (priorityPolicy Strict)", k)
		}
		rank[k] = i + 1
	}
	order := slices.Sorted(maps.Keys(in))
	slices.SortStableFunc(order, func(a, b string) int {
		// Unranked keys first; ranked keys by descending rank number (lowest priority first).
		ra, rb := rank[a], rank[b]
		switch {
		case ra == 0 && rb == 0:
			return 0
		case ra == 0:
			return -1
		case rb == 0:
			return 1
		default:
			return rb - ra
		}
	})

	merged := map[string]json.RawMessage{}
	setBy := map[string]string{}
	for _, k := range order {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(in[k], &obj); err != nil || obj == nil {
			return nil, fmt.Errorf("merge: the value of %q is not a JSON object", k)
		}
		for _, field := range slices.Sorted(maps.Keys(obj)) {
			v := obj[field]
			if prev, ok := merged[field]; ok && rank[k] == 0 && !bytes.Equal(prev, v) && m.ConflictPolicy != "Ignore" {
				return nil, fmt.Errorf("merge: field %q is set differently by %q and %q (conflictPolicy Error)", field, setBy[field], k)
			}
			merged[field], setBy[field] = v, k
		}
	}

	if m.Strategy == "JSON" {
		// Marshalling escapes "<", ">" and "&" in the values: six bytes
		// each at most, charged before.
		var size int64
		for field, raw := range merged {
			size += 6 * int64(len(field)+len(raw)+4)
		}
		if err := b.Produce("merge into "+m.Into, size); err != nil {
			return nil, err
		}
		out, err := json.Marshal(merged)
		if err != nil {
			return nil, err
		}
		return map[string][]byte{m.Into: out}, nil
	}
	out := make(map[string][]byte, len(merged))
	for field, raw := range merged {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out[field] = []byte(s)
		} else {
			out[field] = raw
		}
	}
	return out, nil
}
