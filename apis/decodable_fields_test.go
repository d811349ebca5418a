package apis_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/eso-dev/eso/tests/testenv"
)

// A field whose JSON the API server accepts but whose Go decoding fails makes
// eso's informer fail to list the whole kind: one tenant's object would stop
// every namespace's syncs. TestEveryRiskyFieldIsValidatedBySchema walks every
// CRD beside its Go type and fails when such a field has no schema rule that
// makes the API server refuse what Go cannot decode.
func TestEveryRiskyFieldIsValidatedBySchema(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.CRDDir(), "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	scheme := env.Client.Scheme()
	checked := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue // nothing is decoded at a version nobody can read
			}
			gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
			obj, err := scheme.New(gvk)
			if err != nil {
				t.Errorf("%s: no Go type for %s: %v", filepath.Base(f), gvk, err)
				continue
			}
			w := fieldWalker{t: t, where: gvk.Kind}
			w.walk(reflect.TypeOf(obj).Elem(), v.Schema.OpenAPIV3Schema, "")
			checked += w.risky
		}
	}
	if checked < 10 {
		t.Fatalf("found %d risky fields in all CRDs, want at least 10: is the walk broken?", checked)
	}
}

type fieldWalker struct {
	t     *testing.T
	where string
	risky int
}

var (
	durationType = reflect.TypeFor[metav1.Duration]()
	timeType     = reflect.TypeFor[metav1.Time]()
	quantityType = reflect.TypeFor[resource.Quantity]()
	intstrType   = reflect.TypeFor[intstr.IntOrString]()
	objectMeta   = reflect.TypeFor[metav1.ObjectMeta]()
	typeMeta     = reflect.TypeFor[metav1.TypeMeta]()
	byteSlice    = reflect.TypeFor[[]byte]()
)

func (w *fieldWalker) walk(t reflect.Type, s *apiextensionsv1.JSONSchemaProps, path string) {
	if s == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if w.checkRisky(t, s, path) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || f.Type == objectMeta || f.Type == typeMeta {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case name == "-":
			case name == "" && f.Anonymous:
				w.walk(f.Type, s, path) // inlined
			default:
				if child, ok := s.Properties[name]; ok {
					w.walk(f.Type, &child, path+"."+name)
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			w.walk(t.Elem(), s.Items.Schema, path+"[]")
		}
	case reflect.Map:
		if s.AdditionalProperties != nil {
			w.walk(t.Elem(), s.AdditionalProperties.Schema, path+"{}")
		}
	}
}

// checkRisky reports whether t is a type the API server's structural schema
// alone does not keep decodable, and if so that s restricts it.
func (w *fieldWalker) checkRisky(t reflect.Type, s *apiextensionsv1.JSONSchemaProps, path string) bool {
	var ok bool
	switch {
	case t == durationType:
		// Go's time.ParseDuration syntax, and CEL's duration() for what a
		// pattern cannot say (overflow, minimums).
		ok = s.Pattern != "" && len(s.XValidations) > 0
	case t == timeType:
		ok = s.Format == "date-time"
	case t == quantityType, t == intstrType:
		ok = s.XIntOrString && (s.Pattern != "" || t == intstrType)
	case t == byteSlice:
		ok = s.Format == "byte"
	case t.Kind() == reflect.String && t.PkgPath() != "" && strings.HasPrefix(t.PkgPath(), "github.com/eso-dev/eso/apis"):
		// A named string type of eso's APIs is a closed set of values.
		ok = len(s.Enum) > 0 || s.Pattern != "" || len(s.XValidations) > 0
	default:
		return false
	}
	w.risky++
	if !ok {
		w.t.Errorf("%s%s (%s) has no schema validation the API server enforces", w.where, path, t)
	}
	return true
}
