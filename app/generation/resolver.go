// Package generation runs the generators an ExternalSecret references: it
// resolves a generatorRef to a generator, its configuration and the
// namespace its credentials resolve in (with the same rules as stores), and
// records what each generation made in GeneratorStates so that replaced
// values are revoked, never values still in use.
package generation

import (
	"context"
	"errors"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/grpcclient"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// API versions a generatorRef may carry.
const (
	APIVersion         = "generator.external-secrets.io/v2alpha1"
	KindsAPIVersion    = "provider.generator.external-secrets.io/v2alpha1"
	UpstreamAPIVersion = "generators.external-secrets.io/v1alpha1"

	KindGenerator        = "Generator"
	KindClusterGenerator = "ClusterGenerator"
)

// defaultGCDeadline is how long a replaced value stays valid when the
// generator says nothing (and for generator kinds referenced directly).
const defaultGCDeadline = 5 * time.Minute

// Resolved is a generatorRef made concrete.
type Resolved struct {
	Generator plugin.Generator
	// Ref is the generator configuration; Scope where its credentials resolve.
	Ref   plugin.Ref
	Scope plugin.Scope
	// Source is the reference as the ExternalSecret made it, apiVersion filled in.
	Source      genv2.GeneratorReference
	StatePolicy genv2.StatePolicy
	GCDeadline  time.Duration
	StatePatch  *apiextensionsv1.JSON
}

// Resolver resolves generatorRefs for one controller class.
type Resolver struct {
	reader  client.Reader
	plugins *plugin.Plugins
	class   string
	// remote serves generators whose providerConfig.address is set; nil
	// refuses them.
	remote *grpcclient.Remote
	// upstream are upstream's generator kinds served, by kind; nil in a
	// build without v1 compatibility.
	upstream map[string]UpstreamKind
}

// NewResolver returns a resolver reading through reader.
func NewResolver(reader client.Reader, plugins *plugin.Plugins, class string) *Resolver {
	return &Resolver{reader: reader, plugins: plugins, class: class}
}

// WithRemote lets the resolver serve generators whose
// providerConfig.address is set, through remote.
func (r *Resolver) WithRemote(remote *grpcclient.Remote) *Resolver {
	r.remote = remote
	return r
}

// Generators are the compiled-in generators.
func (r *Resolver) Plugins() *plugin.Plugins { return r.plugins }

// Resolve finds the generator an ExternalSecret of namespace references and
// checks it may be used now: class, a ClusterGenerator's namespace
// conditions, and gating. ours is false when the Generator or ClusterGenerator
// belongs to another controller class.
func (r *Resolver) Resolve(ctx context.Context, namespace string, ref esv1.GeneratorRef) (res *Resolved, ours bool, err error) {
	source := genv2.GeneratorReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name}
	if uk, ok := r.upstream[ref.Kind]; ok && ref.APIVersion == UpstreamAPIVersion {
		if res, ours, found, err := r.resolveUpstream(ctx, namespace, source, uk); found {
			return res, ours, err
		}
	}
	switch {
	case ref.Kind == KindGenerator && (ref.APIVersion == "" || ref.APIVersion == APIVersion):
		source.APIVersion = APIVersion
		var g genv2.Generator
		if err := r.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, &g); err != nil {
			return nil, true, stores.NotFound(err, "Generator "+namespace+"/"+ref.Name)
		}
		if g.Spec.Controller != r.class {
			return nil, false, nil
		}
		if err := stores.Gate(g.Spec.GatingPolicy, g.Status.Conditions, g.Generation, "Generator "+namespace+"/"+ref.Name); err != nil {
			return nil, true, err
		}
		pr := g.Spec.ProviderConfig.ProviderRef
		if pr.Namespace != "" && pr.Namespace != namespace {
			return nil, true, fmt.Errorf("%w: Generator %s/%s names %s %s/%s", stores.ErrCrossNamespace, namespace, ref.Name, pr.Kind, pr.Namespace, pr.Name)
		}
		if g.Spec.ProviderConfig.Address == "" && !r.classOf(ctx, pr.Kind, client.ObjectKey{Namespace: namespace, Name: pr.Name}) {
			return nil, false, nil
		}
		res, err := r.resolved(source, &g.Spec, plugin.Ref{Kind: pr.Kind, Namespace: namespace, Name: pr.Name}, namespace, namespace)
		return res, true, err
	case ref.Kind == KindClusterGenerator && (ref.APIVersion == "" || ref.APIVersion == APIVersion):
		source.APIVersion = APIVersion
		var cg genv2.ClusterGenerator
		if err := r.reader.Get(ctx, client.ObjectKey{Name: ref.Name}, &cg); err != nil {
			return nil, true, stores.NotFound(err, "ClusterGenerator "+ref.Name)
		}
		if cg.Spec.Controller != r.class {
			return nil, false, nil
		}
		allowed, err := stores.AllowsNamespace(ctx, r.reader, cg.Spec.Conditions, namespace)
		if err != nil {
			return nil, true, err
		}
		if !allowed {
			return nil, true, fmt.Errorf("%w: ClusterGenerator %s may not be used from namespace %s", stores.ErrNotAllowed, ref.Name, namespace)
		}
		if err := stores.Gate(cg.Spec.GatingPolicy, cg.Status.Conditions, cg.Generation, "ClusterGenerator "+ref.Name); err != nil {
			return nil, true, err
		}
		pr := cg.Spec.ProviderConfig.ProviderRef
		if cg.Spec.ProviderConfig.Address == "" && !r.classOf(ctx, pr.Kind, client.ObjectKey{Namespace: pr.Namespace, Name: pr.Name}) {
			return nil, false, nil
		}
		credentials := pr.Namespace
		if cg.Spec.AuthenticationScope == ssv2.ManifestNamespace {
			credentials = namespace
		}
		res, err := r.resolved(source, &cg.Spec.GeneratorSpec, plugin.Ref{Kind: pr.Kind, Namespace: pr.Namespace, Name: pr.Name}, credentials, "")
		return res, true, err
	case ref.APIVersion == "" || ref.APIVersion == KindsAPIVersion || ref.APIVersion == UpstreamAPIVersion:
		// A generator kind referenced directly: its configuration lives in
		// the ExternalSecret's namespace, states are tracked by default.
		source.APIVersion = KindsAPIVersion
		gen, ok := r.plugins.Generator(ref.Kind)
		if !ok {
			var also []string
			if ref.APIVersion == "" {
				also = []string{KindGenerator, KindClusterGenerator}
			}
			return nil, true, r.notServed(ref.Kind, also...)
		}
		if !r.classOf(ctx, ref.Kind, client.ObjectKey{Namespace: namespace, Name: ref.Name}) {
			return nil, false, nil
		}
		return &Resolved{Generator: gen, Ref: plugin.Ref{Kind: ref.Kind, Namespace: namespace, Name: ref.Name},
			Scope: plugin.Scope{Namespace: namespace}, Source: source, StatePolicy: genv2.StateTrack, GCDeadline: defaultGCDeadline}, true, nil
	default:
		return nil, true, fmt.Errorf("%w: %s is not a generator of %s", stores.ErrUnsupportedVersion, ref.Kind, ref.APIVersion)
	}
}

// classOf reports whether a generator configuration is this eso's to use,
// however it is referenced: only kinds that carry a controller class
// (plugin.Classed) are read here, from the cache the generator reads
// them through; a configuration not found yet is left to the generator to
// report. A configuration served by a provider process is that process's
// to read.
func (r *Resolver) classOf(ctx context.Context, kind string, key client.ObjectKey) (ours bool) {
	cfg, ok := r.plugins.Index().NewConfig(plugin.RoleGenerator, kind)
	if !ok {
		return true
	}
	classed, ok := cfg.(plugin.Classed)
	if !ok || r.reader.Get(ctx, key, cfg) != nil {
		return true
	}
	return classed.ControllerClass() == r.class
}

// ErrUnknownKind: a generator kind no generator has, but so near one
// compiled in (by config.Closest) that it is most likely misspelled. It is
// also stores.ErrNotCompiledIn, so it has that error's outcome.
var ErrUnknownKind = errors.New("unknown generator kind")

type unknownKindError struct{ kind, near string }

func (e *unknownKindError) Error() string {
	return fmt.Sprintf("%s %s: did you mean %s?", ErrUnknownKind, e.kind, e.near)
}

func (e *unknownKindError) Is(target error) bool {
	return target == ErrUnknownKind || target == stores.ErrNotCompiledIn
}

// notServed is the error for a generator kind no compiled-in generator
// serves: a near miss of a compiled-in kind (or of also) as the typo it
// most likely is, anything else as not compiled in.
func (r *Resolver) notServed(kind string, also ...string) error {
	if near := plugin.Closest(kind, append(r.plugins.Index().Kinds(plugin.RoleGenerator), also...)); near != "" {
		return &unknownKindError{kind: kind, near: near}
	}
	return fmt.Errorf("%w: generator kind %s (see `eso providers`)", stores.ErrNotCompiledIn, kind)
}

// resolved is the generator of spec, in process or in a provider process.
// ownNamespace is a Generator's namespace, empty for a ClusterGenerator.
func (r *Resolver) resolved(source genv2.GeneratorReference, spec *genv2.GeneratorSpec, ref plugin.Ref, credentials, ownNamespace string) (*Resolved, error) {
	gen, err := r.ServedBy(spec, ref, ownNamespace)
	if err != nil {
		return nil, err
	}
	res := &Resolved{Generator: gen, Ref: ref, Scope: plugin.Scope{Namespace: credentials}, Source: source,
		StatePolicy: spec.StatePolicy, GCDeadline: defaultGCDeadline}
	if res.StatePolicy == "" {
		res.StatePolicy = genv2.StateTrack
	}
	if spec.StateSpec != nil {
		if spec.StateSpec.GarbageCollectionDeadline != nil {
			res.GCDeadline = spec.StateSpec.GarbageCollectionDeadline.Duration
		}
		res.StatePatch = spec.StateSpec.StatePatch
	}
	return res, nil
}

// ServedBy is the generator serving ref: the compiled-in generator of its
// kind or, when providerConfig.address is set, the provider process's.
// ownNamespace is the Generator's namespace, empty for a ClusterGenerator.
func (r *Resolver) ServedBy(spec *genv2.GeneratorSpec, ref plugin.Ref, ownNamespace string) (plugin.Generator, error) {
	pc := spec.ProviderConfig
	if pc.Address == "" {
		gen, ok := r.plugins.Generator(ref.Kind)
		if !ok {
			return nil, r.notServed(ref.Kind)
		}
		return gen, nil
	}
	if r.remote == nil {
		return nil, fmt.Errorf("%w in this eso", stores.ErrRemoteNotEnabled)
	}
	ep, err := r.remote.Endpoint(pc.Address, pc.Auth, ownNamespace, ref.Namespace)
	switch {
	case errors.Is(err, grpcclient.ErrPlaintextRefused):
		return nil, fmt.Errorf("%w for generator %s %s/%s: %w", stores.ErrRemoteNotEnabled, ref.Kind, ref.Namespace, ref.Name, err)
	case errors.Is(err, grpcclient.ErrCertificateNamespace):
		return nil, fmt.Errorf("%w: generator %s %s/%s: %w", stores.ErrCrossNamespace, ref.Kind, ref.Namespace, ref.Name, err)
	case err != nil:
		return nil, err
	}
	return r.remote.Generator(ep, ref.Kind), nil
}

// ForState is the generator that can revoke what a GeneratorState records:
// the one serving its Generator or ClusterGenerator now (in process or in a
// provider process), else the compiled-in generator of its kind. Unlike
// Resolve it ignores gating and a ClusterGenerator's namespace conditions:
// revoking is always allowed. It still holds the state to the namespaces a
// generation could have used, so that even a state eso signed cannot make
// it use another namespace's configuration or credentials; the caller
// verifies the signature first.
func (r *Resolver) ForState(ctx context.Context, st *genv2.GeneratorState) (plugin.Generator, error) {
	ref := plugin.Ref{Kind: st.Spec.ProviderRef.Kind, Namespace: st.Spec.ProviderRef.Namespace, Name: st.Spec.ProviderRef.Name}
	if st.Spec.Generator.APIVersion == UpstreamAPIVersion {
		if gen, ok, err := r.forState(ctx, st, ref); ok || err != nil {
			return gen, err
		}
	}
	if st.Spec.Generator.Kind != KindClusterGenerator || st.Spec.Generator.APIVersion != APIVersion {
		// A Generator or a generator kind: its own namespace only.
		if ref.Namespace != st.Namespace || st.Spec.CredentialsNamespace != st.Namespace {
			return nil, fmt.Errorf("%w: GeneratorState %s/%s names configuration namespace %q and credentials namespace %q",
				stores.ErrCrossNamespace, st.Namespace, st.Name, ref.Namespace, st.Spec.CredentialsNamespace)
		}
	}
	if st.Spec.Generator.APIVersion == APIVersion {
		switch st.Spec.Generator.Kind {
		case KindGenerator:
			var g genv2.Generator
			if err := r.reader.Get(ctx, client.ObjectKey{Namespace: st.Namespace, Name: st.Spec.Generator.Name}, &g); err == nil {
				return r.ServedBy(&g.Spec, ref, g.Namespace)
			}
		case KindClusterGenerator:
			var cg genv2.ClusterGenerator
			if err := r.reader.Get(ctx, client.ObjectKey{Name: st.Spec.Generator.Name}, &cg); err == nil {
				if err := stateMatchesClusterGenerator(st, &cg); err != nil {
					return nil, err
				}
				return r.ServedBy(&cg.Spec.GeneratorSpec, ref, "")
			}
		}
	}
	gen, ok := r.plugins.Generator(ref.Kind)
	if !ok {
		return nil, fmt.Errorf("%w: generator kind %s, needed to revoke", stores.ErrNotCompiledIn, ref.Kind)
	}
	return gen, nil
}

// stateMatchesClusterGenerator checks a state of a ClusterGenerator names
// its configuration and the credentials namespace its authenticationScope
// gives.
func stateMatchesClusterGenerator(st *genv2.GeneratorState, cg *genv2.ClusterGenerator) error {
	pr := cg.Spec.ProviderConfig.ProviderRef
	credentials := pr.Namespace
	if cg.Spec.AuthenticationScope == ssv2.ManifestNamespace {
		credentials = st.Namespace
	}
	got := st.Spec.ProviderRef
	if got.Kind != pr.Kind || got.Name != pr.Name || got.Namespace != pr.Namespace || st.Spec.CredentialsNamespace != credentials {
		return fmt.Errorf("%w: GeneratorState %s/%s does not match ClusterGenerator %s (configuration %s/%s, credentials namespace %s)",
			stores.ErrCrossNamespace, st.Namespace, st.Name, cg.Name, pr.Namespace, pr.Name, credentials)
	}
	return nil
}
