package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/eso-dev/eso/apis/crds"
)

// readManifests decodes the objects of paths (files, or directories of
// .yaml, .yml and .json files; "-" is standard input), each with the
// defaults its CRD's schema gives, as the API server would store it.
// Objects of kinds eso does not read (a Deployment beside them) are
// skipped.
func readManifests(scheme *runtime.Scheme, paths []string, stdin io.Reader) ([]client.Object, error) {
	defaults, err := newDefaulter()
	if err != nil {
		return nil, err
	}
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	var objs []client.Object
	for _, path := range paths {
		files, err := manifestFiles(path)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			var data []byte
			if f == "-" {
				data, err = io.ReadAll(stdin)
			} else {
				data, err = os.ReadFile(f)
			}
			if err != nil {
				return nil, err
			}
			reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
			for i := 1; ; i++ {
				doc, err := reader.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return nil, fmt.Errorf("%s: %w", f, err)
				}
				if strings.TrimSpace(string(doc)) == "" {
					continue
				}
				obj, err := decodeObject(decoder, defaults, doc)
				if err != nil {
					return nil, fmt.Errorf("%s, document %d: %w", f, i, err)
				}
				if obj != nil {
					objs = append(objs, obj)
				}
			}
		}
	}
	return objs, nil
}

// manifestFiles are the files path stands for.
func manifestFiles(path string) ([]string, error) {
	if path == "-" {
		return []string{path}, nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files []string
	for _, pattern := range []string{"*.yaml", "*.yml", "*.json"} {
		m, err := filepath.Glob(filepath.Join(path, pattern))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	return files, nil
}

// decodeObject decodes one document, with its CRD's defaults; nil for a
// document that is only comments.
func decodeObject(decoder runtime.Decoder, defaults *defaulter, doc []byte) (client.Object, error) {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	var u map[string]any
	if err := json.Unmarshal(js, &u); err != nil {
		return nil, err
	}
	if u == nil {
		return nil, nil
	}
	apiVersion, _ := u["apiVersion"].(string)
	kind, _ := u["kind"].(string)
	if s := defaults.schemas[schema.FromAPIVersionAndKind(apiVersion, kind)]; s != nil {
		applyDefaults(u, s)
		if js, err = json.Marshal(u); err != nil {
			return nil, err
		}
	}
	obj, _, err := decoder.Decode(js, nil, nil)
	if runtime.IsNotRegisteredError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	o, ok := obj.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%s %s is not an object", apiVersion, kind)
	}
	return o, nil
}

// defaulter holds the schemas of the kinds whose defaults are applied.
type defaulter struct {
	schemas map[schema.GroupVersionKind]*apiextensionsv1.JSONSchemaProps
}

func newDefaulter() (*defaulter, error) {
	d := &defaulter{schemas: map[schema.GroupVersionKind]*apiextensionsv1.JSONSchemaProps{}}
	for _, raw := range [][]byte{crds.ExternalSecrets, crds.PushSecrets} {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			return nil, fmt.Errorf("reading eso's CRDs: %w", err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Served && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
				d.schemas[gvk] = v.Schema.OpenAPIV3Schema
			}
		}
	}
	return d, nil
}

// applyDefaults sets the schema's defaults in x as the API server does
// for a structural schema: a property absent (or null where the schema
// does not allow null) takes its default, then everything present is
// walked, through properties, list items and map values.
func applyDefaults(x any, s *apiextensionsv1.JSONSchemaProps) {
	switch x := x.(type) {
	case map[string]any:
		for name, prop := range s.Properties {
			if prop.Default == nil {
				continue
			}
			if v, ok := x[name]; ok && (v != nil || prop.Nullable) {
				continue
			}
			var def any
			if json.Unmarshal(prop.Default.Raw, &def) == nil {
				x[name] = def
			}
		}
		for name, v := range x {
			if prop, ok := s.Properties[name]; ok {
				applyDefaults(v, &prop)
			} else if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
				applyDefaults(v, s.AdditionalProperties.Schema)
			}
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for _, v := range x {
				applyDefaults(v, s.Items.Schema)
			}
		}
	}
}
