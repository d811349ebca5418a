// Package explain is eso's day-two command line: `eso explain` describes
// one ExternalSecret, PushSecret or store as the chain eso follows (object →
// store → provider configuration → credentials Secrets), each link's state,
// what eso last did, when it acts next and what to change; `eso check store`
// validates a store once, as the store controller does. Both read the
// cluster with the user's kubeconfig and never print a secret value.
//
// The package is a composition root, like main: `eso check` validates with
// the providers compiled into this binary (app/wiring).
package explain

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/cli/binary"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// timeout bounds one command: every read and a provider's validation.
const timeout = 60 * time.Second

// connFlags are the kubectl-style flags both commands take, and a store's
// apiVersion.
type connFlags struct {
	kubeconfig, context, namespace, class string
	apiVersion                            string
}

// newFlagSet returns the flag set of the command name, with connFlags
// registered.
func newFlagSet(name string) (*flag.FlagSet, *connFlags) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f connFlags
	f.register(fs)
	return fs, &f
}

func (f *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.apiVersion, "api-version", "", "a store's apiVersion ("+esv1.StoreAPIVersionV2Alpha1+" or "+stores.StoreAPIVersionV1+
		"); default: resolved as a storeRef without apiVersion is")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	fs.StringVar(&f.context, "context", "", "kubeconfig context to use (default: the current context)")
	fs.StringVar(&f.namespace, "namespace", "", "namespace of the object (default: the context's namespace, else default)")
	fs.StringVar(&f.namespace, "n", "", "short for --namespace")
	fs.StringVar(&f.class, "controller-class", "", "the --controller-class of the eso acting on the stores (empty: stores without a class)")
}

// parseInterspersed parses flags before, between and after positional
// arguments, as kubectl does (`eso explain es/app -n demo`), and returns
// the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// session is what a command reads the cluster through.
type session struct {
	client    client.Client
	namespace string
	resolver  *stores.Resolver
}

// connect loads the kubeconfig as kubectl does (--kubeconfig, else
// $KUBECONFIG, else ~/.kube/config; --context; the context's namespace) and
// builds a client and a store resolver reading straight from the API server
// with the user's rights; ambient lends the providers the user's own cloud
// identity, as eso's --allow-ambient-credentials lends eso's.
func connect(build binary.Build, f connFlags, ambient bool) (*session, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.context})
	rc, err := loader.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, errors.New("no Kubernetes configuration found: pass --kubeconfig, set $KUBECONFIG or write ~/.kube/config")
		}
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	namespace := f.namespace
	if namespace == "" {
		if namespace, _, err = loader.Namespace(); err != nil {
			return nil, fmt.Errorf("reading the context's namespace: %w", err)
		}
	}
	rc = rest.CopyConfig(rc)
	rc.UserAgent = "eso-cli"
	parts, err := build.Parts()
	if err != nil {
		return nil, err
	}
	c, err := client.New(rc, client.Options{Scheme: parts.Scheme})
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	d := plugin.Deps{Client: c, APIReader: c, RESTConfig: rc, AmbientCredentials: ambient}
	// Read straight from the API server: the CLI has no cache. Without a
	// provider process connection, a store with providerConfig.address is
	// explained from its status, not validated here.
	resolver := stores.NewResolver(c, plugin.NewPlugins(parts.Index, d), stores.NewClientCache(), f.class).WithAPIs(parts.StoreAPIs...)
	return &session{client: c, namespace: namespace, resolver: resolver}, nil
}

// withTimeout is a context for one command.
func withTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), timeout)
}

// usageError prints the usage, to stdout when it was asked for (--help,
// exit 0), else with err to stderr (exit 2).
func usageError(stdout, stderr io.Writer, fs *flag.FlagSet, usage string, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, "usage:", usage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "eso:", err)
	}
	fmt.Fprintln(stderr, "usage:", usage)
	fs.SetOutput(stderr)
	fs.PrintDefaults()
	return 2
}

// splitKindName splits "kind/name" (or "kind name" given as two args).
// A kind may carry its version and group as kubectl writes them
// ("secretstore.v1.external-secrets.io"): apiVersion is then
// "external-secrets.io/v1".
func splitKindName(args []string) (kind, apiVersion, name string, ok bool) {
	switch len(args) {
	case 1:
		kind, name, ok = strings.Cut(args[0], "/")
	case 2:
		kind, name, ok = args[0], args[1], true
	}
	kind = strings.ToLower(kind)
	if k, versionGroup, qualified := strings.Cut(kind, "."); qualified {
		version, group, _ := strings.Cut(versionGroup, ".")
		kind, apiVersion = k, group+"/"+version
		ok = ok && group != "" && version != ""
	}
	return kind, apiVersion, name, ok && kind != "" && name != ""
}
