// Package server is the provider process: it serves providers and
// generators over gRPC (apis/proto/provider/v1) with mTLS, so core can reach
// them as a separate Deployment. It is what package sdk's Serve runs for a
// provider written outside eso's tree, and what `eso --mode=provider` runs
// for the compiled-in ones (app/providermode): one server, whoever built
// the binary. Requests and errors cross the wire through
// providers/plugin/wire, the conversions core's client uses too.
//
// Out-of-tree providers use package sdk; this package's API follows eso's
// own needs.
package server

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/plugin/clientcache"
	"github.com/eso-dev/eso/providers/plugin/pluginmetrics"
	"github.com/eso-dev/eso/providers/plugin/wire"
)

// Options configure a Server.
type Options struct {
	Plugins *plugin.Plugins
	// ConfigReader reads configuration objects to tell whether a cached
	// client is still current; straight from the API server in provider mode.
	ConfigReader client.Reader
	// Kinds, if not empty, are the only provider and generator kinds served.
	Kinds []string
	// ConfigTTL defaults to DefaultConfigTTL.
	ConfigTTL time.Duration
	// Version is the build version the handshake reports; by default the
	// version of eso's module the binary was built with.
	Version string
	Log     logr.Logger
}

// Server answers the provider protocol with in-process providers and
// generators. It keeps one provider client per configuration and scope, so
// a refresh costs no login.
type Server struct {
	providers      map[string]servedProvider
	generators     map[string]plugin.Generator
	providerKinds  []string
	generatorKinds []string
	configs        *configFingerprints
	clients        *clientcache.Cache[clientKey]
	version        string
	log            logr.Logger
}

type servedProvider struct {
	provider plugin.Provider
	reg      plugin.Registration
}

// New returns a server for the kinds opts selects. A selected kind that is not
// compiled in is an error.
func New(opts Options) (*Server, error) {
	if opts.ConfigTTL == 0 {
		opts.ConfigTTL = DefaultConfigTTL
	}
	if opts.Version == "" {
		opts.Version = moduleVersion()
	}
	s := &Server{
		providers:  map[string]servedProvider{},
		generators: map[string]plugin.Generator{},
		configs:    newConfigFingerprints(opts.ConfigReader, opts.ConfigTTL),
		clients:    newClientCache(DefaultClientIdleTimeout),
		version:    opts.Version,
		log:        opts.Log,
	}
	if err := CheckKinds(opts.Plugins.Index(), opts.Kinds); err != nil {
		return nil, err
	}
	selected := func(kind string) bool { return len(opts.Kinds) == 0 || slices.Contains(opts.Kinds, kind) }
	for _, r := range opts.Plugins.Index().Registrations(plugin.RoleProvider) {
		if prov, ok := opts.Plugins.Provider(r.Kind); ok && selected(r.Kind) {
			s.providers[r.Kind] = servedProvider{provider: prov, reg: r}
			s.providerKinds = append(s.providerKinds, r.Kind)
		}
	}
	for _, r := range opts.Plugins.Index().Registrations(plugin.RoleGenerator) {
		if gen, ok := opts.Plugins.Generator(r.Kind); ok && selected(r.Kind) {
			s.generators[r.Kind] = gen
			s.generatorKinds = append(s.generatorKinds, r.Kind)
		}
	}
	slices.Sort(s.providerKinds)
	slices.Sort(s.generatorKinds)
	return s, nil
}

// CheckKinds refuses a selected kind (--provider-kinds) that idx does not
// hold, naming the nearest one: a mistake of the command line, which a
// process can report before it starts anything.
func CheckKinds(idx *plugin.Index, kinds []string) error {
	compiled := slices.Concat(idx.Kinds(plugin.RoleProvider), idx.Kinds(plugin.RoleGenerator))
	for _, k := range kinds {
		if slices.Contains(compiled, k) {
			continue
		}
		if near := plugin.Closest(k, compiled); near != "" {
			return fmt.Errorf("--provider-kinds: unknown kind %s: did you mean %s?", k, near)
		}
		slices.Sort(compiled)
		return fmt.Errorf("--provider-kinds: %s is not compiled into this binary (compiled in: %s)", k, strings.Join(compiled, ", "))
	}
	return nil
}

// ProviderKinds are the provider kinds served, sorted.
func (s *Server) ProviderKinds() []string { return slices.Clone(s.providerKinds) }

// GeneratorKinds are the generator kinds served, sorted.
func (s *Server) GeneratorKinds() []string { return slices.Clone(s.generatorKinds) }

// DropIdle closes the clients nobody used for the idle timeout and forgets
// expired configuration fingerprints.
func (s *Server) DropIdle(ctx context.Context) {
	s.clients.DropIdle(ctx)
	s.configs.Sweep()
}

// Close closes every cached client (logging out, revoking tokens), once the
// calls using them are done.
func (s *Server) Close(ctx context.Context) { s.clients.Close(ctx) }

// provider returns the served provider of a target, or the status saying why
// there is none.
func (s *Server) provider(t *providerv1.Target, needsScope bool) (servedProvider, plugin.Ref, plugin.Scope, error) {
	ref, scope, err := checkTarget(t, needsScope)
	if err != nil {
		return servedProvider{}, ref, scope, err
	}
	p, ok := s.providers[ref.Kind]
	if !ok {
		return servedProvider{}, ref, scope, notServed("provider", ref.Kind, s.providerKinds)
	}
	return p, ref, scope, nil
}

// generator is provider's counterpart for generator kinds.
func (s *Server) generator(t *providerv1.Target, needsScope bool) (plugin.Generator, plugin.Ref, plugin.Scope, error) {
	ref, scope, err := checkTarget(t, needsScope)
	if err != nil {
		return nil, ref, scope, err
	}
	g, ok := s.generators[ref.Kind]
	if !ok {
		return nil, ref, scope, notServed("generator", ref.Kind, s.generatorKinds)
	}
	return g, ref, scope, nil
}

// checkTarget refuses a request that does not say which configuration it
// acts through, or, when it acts, in which namespace.
func checkTarget(t *providerv1.Target, needsScope bool) (plugin.Ref, plugin.Scope, error) {
	ref, scope := wire.FromTarget(t)
	var missing []string
	for _, f := range []struct{ name, value string }{{"kind", ref.Kind}, {"name", ref.Name}, {"namespace", ref.Namespace}} {
		if f.value == "" {
			missing = append(missing, f.name)
		}
	}
	if needsScope && scope.Namespace == "" {
		missing = append(missing, "credentials_namespace")
	}
	if len(missing) > 0 {
		return ref, scope, status.Errorf(codes.InvalidArgument, "target lacks %s", strings.Join(missing, ", "))
	}
	return ref, scope, nil
}

// notServed says that a kind is not served here and what is: the process was
// started with other --provider-kinds, or built without the kind.
func notServed(what, kind string, served []string) error {
	list := strings.Join(served, ", ")
	if list == "" {
		list = "none"
	}
	return status.Errorf(codes.Unimplemented, "%s kind %q is not served by this provider process (served: %s)", what, kind, list)
}

// withClient runs call with the cached client of the target, building it if
// needed, and returns call's error in protocol form.
func (s *Server) withClient(ctx context.Context, t *providerv1.Target, call func(plugin.SecretsClient) error) error {
	p, ref, scope, err := s.provider(t, true)
	if err != nil {
		return err
	}
	fingerprint, err := s.configs.Fingerprint(ctx, ref, p.reg.NewConfig)
	if err != nil {
		if errors.Is(err, plugin.ErrConfigNotFound) {
			s.clients.ForgetWhere(ctx, ofConfig(ref))
		}
		return wire.ToStatus(err)
	}
	key := clientKey{ref: ref, scope: scope}
	cl, release, err := s.clients.Get(ctx, key, fingerprint, func(ctx context.Context) (plugin.SecretsClient, error) {
		// As in core: calls are counted, and the wrapper always has the write
		// side and CheckAuth (answering ErrNotSupported, or nothing to check).
		cl, err := p.provider.NewClient(ctx, ref, scope)
		return pluginmetrics.Login(ref.Kind, cl, err)
	})
	if err != nil {
		return wire.ToStatus(err)
	}
	defer release()
	err = call(cl)
	if errors.Is(err, plugin.ErrAuthFailed) {
		// Refused credentials: log in afresh next time, as core does in process.
		s.clients.Forget(ctx, key)
	}
	return wire.ToStatus(err)
}

// moduleVersion is the version of eso's module in the binary's build info:
// the release an out-of-tree provider was built against, "dev" when it is
// not known.
func moduleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if info.Main.Path == module && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	for _, dep := range info.Deps {
		if dep.Path == module {
			return dep.Version
		}
	}
	return "dev"
}

// module is eso's Go module path.
const module = "github.com/eso-dev/eso"
