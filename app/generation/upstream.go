package generation

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// UpstreamKind is a generator kind of upstream's API
// (generators.external-secrets.io/v1alpha1, served by the v1 compatibility
// layer) whose objects translate into eso's generator configurations.
type UpstreamKind struct {
	Kind string
	// Cluster: the kind is cluster-scoped, usable from every namespace;
	// what it references resolves in the namespace of the object using it.
	Cluster bool
	// New returns an empty object of the kind.
	New func() client.Object
	// Translate returns the eso generator kind and configuration obj
	// stands for.
	Translate func(obj client.Object) (kind string, cfg client.Object, err error)
}

// WithUpstream lets the resolver serve upstream's generator kinds: a
// reference with upstream's apiVersion names an object of that kind, or,
// when there is none in the namespace, eso's kind of the same name (a
// configuration moved by `eso migrate`, its references left as they were).
func (r *Resolver) WithUpstream(kinds []UpstreamKind) *Resolver {
	r.upstream = map[string]UpstreamKind{}
	for _, k := range kinds {
		r.upstream[k.Kind] = k
	}
	return r
}

// resolveUpstream resolves a reference to an upstream generator object.
// found is false when a namespaced object of that name does not exist, so
// that eso's kind of the same name may stand in.
func (r *Resolver) resolveUpstream(ctx context.Context, namespace string, ref genv2.GeneratorReference, uk UpstreamKind) (res *Resolved, ours, found bool, err error) {
	g := upstreamGenerator{reader: r.reader, plugins: r.plugins, kind: uk}
	pref := plugin.Ref{Kind: uk.Kind, Namespace: namespace, Name: ref.Name}
	if uk.Cluster {
		pref.Namespace = ""
	}
	kind, cfg, err := g.read(ctx, pref)
	switch {
	case apierrors.IsNotFound(err) && !uk.Cluster:
		return nil, true, false, nil
	case apierrors.IsNotFound(err):
		return nil, true, true, stores.NotFound(err, uk.Kind+" "+ref.Name)
	case err != nil:
		return nil, true, true, err
	}
	if _, ok := r.plugins.Generator(kind); !ok {
		return nil, true, true, r.notServed(kind)
	}
	if classed, ok := cfg.(plugin.Classed); ok && classed.ControllerClass() != r.class {
		return nil, false, true, nil
	}
	// The sync generates with what was read and judged here: no second
	// read, and no class edited in between.
	g.held = &heldConfig{ref: pref, kind: kind, cfg: cfg}
	return &Resolved{Generator: g, Ref: pref, Scope: plugin.Scope{Namespace: namespace}, Source: ref,
		StatePolicy: genv2.StateTrack, GCDeadline: defaultGCDeadline}, true, true, nil
}

// upstreamGenerator generates with upstream generator objects: it reads
// the object a Ref names, translates it and hands the configuration to
// eso's generator of its kind.
type upstreamGenerator struct {
	reader  client.Reader
	plugins *plugin.Plugins
	kind    UpstreamKind
	// held is the configuration resolution read, for the sync that
	// resolved it; nil reads the object (a revocation).
	held *heldConfig
}

// heldConfig is the translation of the object ref names.
type heldConfig struct {
	ref  plugin.Ref
	kind string
	cfg  client.Object
}

func (g upstreamGenerator) Kind() string { return g.kind.Kind }

// read reads and translates the object ref names. A missing object is
// returned as the API server's NotFound.
func (g upstreamGenerator) read(ctx context.Context, ref plugin.Ref) (string, client.Object, error) {
	if g.held != nil && g.held.ref == ref {
		return g.held.kind, g.held.cfg, nil
	}
	obj := g.kind.New()
	what := fmt.Sprintf("%s %s", g.kind.Kind, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name})
	if err := g.reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil, err
		}
		return "", nil, fmt.Errorf("reading %s: %w", what, err)
	}
	kind, cfg, err := g.kind.Translate(obj)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %s: %w", plugin.ErrInvalidConfig, what, err)
	}
	return kind, cfg, nil
}

// generator reads ref and returns eso's generator of its kind with the
// configuration to hand it.
func (g upstreamGenerator) generator(ctx context.Context, ref plugin.Ref) (plugin.ConfigGenerator, client.Object, error) {
	kind, cfg, err := g.read(ctx, ref)
	if apierrors.IsNotFound(err) {
		return nil, nil, stores.NotFound(err, g.kind.Kind+" "+client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}.String())
	}
	if err != nil {
		return nil, nil, err
	}
	gen, ok := g.plugins.Generator(kind)
	if !ok {
		return nil, nil, fmt.Errorf("%w: generator kind %s", stores.ErrNotCompiledIn, kind)
	}
	cg, ok := gen.(plugin.ConfigGenerator)
	if !ok {
		return nil, nil, fmt.Errorf("%w: generator kind %s takes no configuration in hand", plugin.ErrNotSupported, kind)
	}
	return cg, cfg, nil
}

func (g upstreamGenerator) Generate(ctx context.Context, ref plugin.Ref, scope plugin.Scope) (map[string][]byte, plugin.State, error) {
	gen, cfg, err := g.generator(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	return gen.GenerateFromConfig(ctx, cfg, scope)
}

func (g upstreamGenerator) Cleanup(ctx context.Context, ref plugin.Ref, scope plugin.Scope, state plugin.State) error {
	gen, cfg, err := g.generator(ctx, ref)
	if err != nil {
		return err
	}
	return gen.CleanupFromConfig(ctx, cfg, scope, state)
}

func (g upstreamGenerator) Validate(ctx context.Context, ref plugin.Ref, scope plugin.Scope) error {
	gen, cfg, err := g.generator(ctx, ref)
	if err != nil {
		return err
	}
	return gen.ValidateConfig(ctx, cfg, scope)
}

// forState is the generator of a state recorded for an upstream object.
// A state may name nothing but its own namespace's object and credentials,
// or an upstream ClusterGenerator and its own namespace's credentials. found
// is false when a namespaced object is gone: eso's kind of the same name
// (where `eso migrate` moved it) revokes instead.
func (r *Resolver) forState(ctx context.Context, st *genv2.GeneratorState, ref plugin.Ref) (gen plugin.Generator, found bool, err error) {
	uk, ok := r.upstream[st.Spec.Generator.Kind]
	if !ok {
		return nil, false, nil
	}
	ownNamespace := st.Namespace
	if uk.Cluster {
		ownNamespace = ""
	}
	if ref.Kind != uk.Kind || ref.Name != st.Spec.Generator.Name || ref.Namespace != ownNamespace || st.Spec.CredentialsNamespace != st.Namespace {
		return nil, false, fmt.Errorf("%w: GeneratorState %s/%s names %s %s/%s with credentials of %q: a state names its own namespace's",
			stores.ErrCrossNamespace, st.Namespace, st.Name, ref.Kind, ref.Namespace, ref.Name, st.Spec.CredentialsNamespace)
	}
	g := upstreamGenerator{reader: r.reader, plugins: r.plugins, kind: uk}
	switch _, _, err := g.read(ctx, ref); {
	case apierrors.IsNotFound(err) && uk.Cluster:
		return nil, false, fmt.Errorf("%s %s is gone: what its states hold is revoked once it is back", uk.Kind, ref.Name)
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return g, true, nil
}
