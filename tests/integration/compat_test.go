package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eso-dev/eso/tests/testenv"
)

const expectedAnnotation = "compat.eso.test/expected"

// TestCompatibilityFixtures applies every scenario of tests/compat unchanged,
// each into its own namespace, and checks eso produces the expected Secrets.
func TestCompatibilityFixtures(t *testing.T) {
	runEso(t, testConfig())
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "tests", "compat", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures found: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ns := env.Namespace(t, "compat", nil)
			var expected []*corev1.Secret
			for _, obj := range readManifests(t, file) {
				if obj.GetKind() == "Secret" && obj.GetAnnotations()[expectedAnnotation] == "true" {
					var s corev1.Secret
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &s); err != nil {
						t.Fatal(err)
					}
					expected = append(expected, &s)
					continue
				}
				obj.SetNamespace(ns)
				if err := env.Client.Create(context.Background(), obj); err != nil {
					t.Fatalf("applying %s %s unchanged: %v", obj.GetKind(), obj.GetName(), err)
				}
			}
			if len(expected) == 0 {
				t.Fatal("fixture has no expected Secret")
			}
			for _, want := range expected {
				checkSecret(t, ns, want)
			}
		})
	}
}

func readManifests(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

// checkSecret waits until the Secret matches want: type, exactly its data
// (stringData counts as data), and the labels and annotations it lists.
func checkSecret(t *testing.T, ns string, want *corev1.Secret) {
	t.Helper()
	wantData := map[string]string{}
	for k, v := range want.StringData {
		wantData[k] = v
	}
	for k, v := range want.Data {
		wantData[k] = string(v)
	}
	eventually(t, "Secret "+want.Name+" as expected", func() error {
		var got corev1.Secret
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: want.Name}, &got); err != nil {
			return err
		}
		var diffs []string
		if want.Type != "" && got.Type != want.Type {
			diffs = append(diffs, fmt.Sprintf("type %s, want %s", got.Type, want.Type))
		}
		if len(got.Data) != len(wantData) {
			diffs = append(diffs, fmt.Sprintf("keys %v, want %d keys", keys(got.Data), len(wantData)))
		}
		for k, v := range wantData {
			if string(got.Data[k]) != v {
				diffs = append(diffs, "key "+k+" differs")
			}
		}
		for k, v := range want.Labels {
			if got.Labels[k] != v {
				diffs = append(diffs, "label "+k+" differs")
			}
		}
		for k, v := range want.Annotations {
			if k != expectedAnnotation && got.Annotations[k] != v {
				diffs = append(diffs, "annotation "+k+" differs")
			}
		}
		if len(diffs) > 0 {
			return fmt.Errorf("%s", strings.Join(diffs, "; "))
		}
		return nil
	})
}
