package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"sigs.k8s.io/yaml"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
)

// readData reads the provider data file: what every store reads offline.
// It is either a YAML map of remote key to value, a value that is a map
// or a list standing for a JSON object or array (read per property, or
// whole with dataFrom.extract), or a Fake provider configuration, whose
// spec.data also lists versions. Either becomes the spec of the in-process
// Fake provider every store resolves to.
func readData(path string) (provv1.FakeSpec, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return provv1.FakeSpec{}, err
	}
	doc, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return provv1.FakeSpec{}, fmt.Errorf("%s: %w", path, err)
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(doc, &head) == nil && head.Kind == "Fake" {
		var cfg provv1.Fake
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return provv1.FakeSpec{}, fmt.Errorf("%s: a Fake configuration: %w", path, err)
		}
		return cfg.Spec, nil
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(doc, &entries); err != nil {
		return provv1.FakeSpec{}, fmt.Errorf("%s: want a map of remote key to value, or a Fake configuration (kind: Fake)", path)
	}
	var spec provv1.FakeSpec
	for _, key := range slices.Sorted(maps.Keys(entries)) {
		value, err := dataValue(entries[key])
		if err != nil {
			return provv1.FakeSpec{}, fmt.Errorf("%s: key %q: %w", path, key, err)
		}
		spec.Data = append(spec.Data, provv1.FakeSecret{Key: key, Value: value})
	}
	return spec, nil
}

// dataValue is a map entry's value as the provider holds it: a string as
// it is, anything else (a number, a map, a list) as its JSON.
func dataValue(raw json.RawMessage) (string, error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", errors.New("no value")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return "", err
	}
	return compact.String(), nil
}
