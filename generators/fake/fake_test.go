package fake

import (
	"context"
	"errors"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// TestGenerateReturnsTheData: the configuration's data, as is, each time.
func TestGenerateReturnsTheData(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := genv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cfg := &genv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "f"}, Spec: genv1.FakeSpec{Data: map[string]string{"foo": "bar", "baz": "bang"}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cfg).Build()
	gen := Registration.NewGenerator(plugin.Deps{Client: c, APIReader: c})
	for range 2 {
		values, state, err := gen.Generate(context.Background(), plugin.Ref{Kind: "Fake", Namespace: "team", Name: "f"}, plugin.Scope{Namespace: "team"})
		if err != nil {
			t.Fatal(err)
		}
		if len(values) != 2 || string(values["foo"]) != "bar" || string(values["baz"]) != "bang" || state != nil {
			t.Fatalf("values %v, state %v", values, state)
		}
	}
}

// TestDataIsBounded: a configuration of more keys than the schema allows
// is refused, whatever way it reached the generator.
func TestDataIsBounded(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := genv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	data := map[string]string{}
	for i := range MaxKeys + 1 {
		data[strconv.Itoa(i)] = "v"
	}
	cfg := &genv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "f"}, Spec: genv1.FakeSpec{Data: data}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cfg).Build()
	gen := Registration.NewGenerator(plugin.Deps{Client: c, APIReader: c})
	if _, _, err := gen.Generate(context.Background(), plugin.Ref{Kind: "Fake", Namespace: "team", Name: "f"}, plugin.Scope{Namespace: "team"}); !errors.Is(err, plugin.ErrInvalidConfig) {
		t.Fatalf("%d keys: %v, want ErrInvalidConfig", len(data), err)
	}
}
