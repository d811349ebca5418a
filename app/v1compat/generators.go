package v1compat

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	upgen "github.com/eso-dev/eso/apis/upstreamv1/generators"
	"github.com/eso-dev/eso/app/generation"
)

// Upstream's generator kinds carry eso's kinds' specs (the apis tests hold
// the schemas equal), so translating one is copying its spec into eso's
// kind of the same name; which kinds there are is read from the two APIs'
// types, not listed here. The one change: upstream's MFA ignores
// spec.algorithm and always uses SHA-1, and so does eso for upstream's kind,
// so a token a service accepted from upstream it accepts from eso.

// generatorScheme knows both APIs' kinds.
var generatorScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := upgen.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := genv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// GeneratorKinds are upstream's generator kinds, translated into eso's:
// every namespaced kind of upstream's API (one with a list kind) and the
// ClusterGenerator.
func GeneratorKinds() []generation.UpstreamKind {
	types := generatorScheme.KnownTypes(upgen.GroupVersion)
	var kinds []generation.UpstreamKind
	for kind := range types {
		if _, listed := types[kind+"List"]; !listed || kind == "ClusterGenerator" {
			continue
		}
		kinds = append(kinds, generation.UpstreamKind{Kind: kind, New: newUpstream(kind),
			Translate: func(obj client.Object) (string, client.Object, error) {
				upstream := reflect.ValueOf(obj).Elem()
				cfg, err := esoConfig(kind, upstream.FieldByName("Spec"))
				if err != nil {
					return "", nil, err
				}
				reflect.ValueOf(cfg).Elem().FieldByName("ObjectMeta").Set(upstream.FieldByName("ObjectMeta"))
				return kind, cfg, nil
			}})
	}
	slices.SortFunc(kinds, func(a, b generation.UpstreamKind) int { return strings.Compare(a.Kind, b.Kind) })
	return append(kinds, generation.UpstreamKind{Kind: "ClusterGenerator", Cluster: true, New: newUpstream("ClusterGenerator"),
		Translate: func(obj client.Object) (string, client.Object, error) {
			return ClusterGenerator(obj.(*upgen.ClusterGenerator))
		}})
}

// newUpstream returns empty objects of upstream's kind.
func newUpstream(kind string) func() client.Object {
	return func() client.Object {
		o, err := generatorScheme.New(upgen.GroupVersion.WithKind(kind))
		if err != nil {
			panic(err) // kind is one the scheme listed
		}
		return o.(client.Object)
	}
}

// esoConfig is eso's configuration of kind holding spec, a value of that
// kind's spec type (which upstream's kinds share). An MFA loses the
// algorithm upstream ignores.
func esoConfig(kind string, spec reflect.Value) (client.Object, error) {
	o, err := generatorScheme.New(genv1.GroupVersion.WithKind(kind))
	if err != nil {
		return nil, fmt.Errorf("kind %s is not one eso ships", kind)
	}
	cfg := o.(client.Object)
	reflect.ValueOf(cfg).Elem().FieldByName("Spec").Set(spec)
	if mfa, ok := cfg.(*genv1.MFA); ok {
		mfa.Spec.Algorithm = ""
	}
	return cfg, nil
}

// ClusterGenerator is the eso kind and configuration an upstream
// ClusterGenerator stands for: its spec.kind, with the member of
// spec.generator of that kind (the member whose spec type is the kind's).
// The configuration has the ClusterGenerator's name and no namespace.
func ClusterGenerator(cg *upgen.ClusterGenerator) (string, client.Object, error) {
	kind := string(cg.Spec.Kind)
	if !generatorScheme.Recognizes(genv1.GroupVersion.WithKind(kind)) {
		return "", nil, fmt.Errorf("ClusterGenerator kind %s is not one eso ships", kind)
	}
	members := reflect.ValueOf(cg.Spec.Generator)
	for i := range members.NumField() {
		m := members.Field(i)
		if m.IsNil() || strings.TrimSuffix(m.Type().Elem().Name(), "Spec") != kind {
			continue
		}
		cfg, err := esoConfig(kind, m.Elem())
		if err != nil {
			return "", nil, err
		}
		cfg.SetName(cg.Name)
		cfg.SetUID(cg.UID)
		return kind, cfg, nil
	}
	return "", nil, fmt.Errorf("ClusterGenerator of kind %s has no spec.generator member for it", kind)
}
