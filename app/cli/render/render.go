// Package render is `eso render`: it prints the Secret an ExternalSecret
// would sync, or what a PushSecret would push, without a running eso. The
// objects go through the controllers' own reconcile against an in-memory
// API server, so templating, its budget, decoding strategies, rewrites,
// the target's metadata and every failure message are the controller's;
// only the provider differs: a data file served by the in-process Fake
// provider, or (--from-cluster) the stores of a real cluster.
package render

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/cli/binary"
	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// Usage is the command line of `eso render`.
const Usage = "eso render -f FILE... (--data FILE | --from-cluster) [-n NAMESPACE] [-o yaml|json] [--show-values]"

const help = `Usage: ` + Usage + `

Prints the Secret each ExternalSecret of the files would sync, exactly as
the controller would write it (labels, annotations, type, data in base64),
or what each PushSecret would push, store by store. Nothing is written
anywhere. The Secret's values are printed: that is the point; treat the
output as a Secret. A PushSecret's values are left out (their size is
shown) unless --show-values.

The objects run through the controllers' own sync. When the sync would
fail, eso render prints the Ready condition's reason and message and exits
with 1. Usage errors exit with 2.

The provider:
  --data FILE     every store the objects name reads this file, served by
                  the in-process Fake provider: a YAML map of remote key to
                  value (a map or list value is a JSON object or array,
                  read per property or extracted whole), or a Fake
                  configuration (kind: Fake) whose spec.data lists
                  versions too. A PushSecret pushes into it; a remote key
                  it already holds was not created by eso and is refused,
                  as a real store refuses it.
  --from-cluster  ExternalSecrets read through the stores of the cluster
                  the kubeconfig names (reading only, with your
                  credentials); templateFrom sources missing from the
                  files are read there too. PushSecrets render offline
                  only.

Other objects of the files (Secrets and ConfigMaps a template or a
PushSecret reads, the Secret a creationPolicy Merge merges into,
SecretStores a PushSecret selects by label, Namespaces) are there as in a
cluster. Generators are not run: their values differ on every run.

Flags:
`

// Run is `eso render`. build is what the binary was built with: offline
// only its Fake provider is used; --from-cluster any of its providers, and
// its v1 store layer resolves stores as eso does.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer, build binary.Build) int {
	fs := flag.NewFlagSet("eso render", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var files stringList
	fs.Var(&files, "f", "an ExternalSecret or PushSecret manifest, with the objects it reads: a file, a directory of .yaml, .yml and .json files, or - for standard input (repeatable)")
	data := fs.String("data", "", "the provider data file every store reads")
	fromCluster := fs.Bool("from-cluster", false, "read ExternalSecrets through the cluster's stores instead of a data file")
	kubeconfig := fs.String("kubeconfig", "", "with --from-cluster: the kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	class := fs.String("controller-class", "", "with --from-cluster: the controller class of the eso whose sync is shown")
	namespace := fs.String("n", "default", "namespace of the objects whose manifest names none")
	output := fs.String("o", "yaml", "output format: yaml or json")
	showValues := fs.Bool("show-values", false, "print the values a PushSecret pushes, not only their size")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, help)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "eso render: %v\nusage: %s (eso render --help)\n", err, Usage)
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return usageError(stderr, fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	case len(files) == 0:
		return usageError(stderr, "-f names no manifest")
	case (*data == "") == !*fromCluster:
		return usageError(stderr, "give exactly one of --data and --from-cluster")
	case *output != "yaml" && *output != "json":
		return usageError(stderr, fmt.Sprintf("invalid -o %q", *output))
	case !*fromCluster && (*kubeconfig != "" || *class != ""):
		return usageError(stderr, "--kubeconfig and --controller-class go with --from-cluster")
	}

	parts, err := build.Parts()
	if err != nil {
		return fail(stderr, err)
	}
	scheme, index := parts.Scheme, parts.Index
	objs, err := readManifests(scheme, files, stdin)
	if err != nil {
		return fail(stderr, err)
	}
	syncing, err := prepare(objs, *namespace, *fromCluster)
	if err != nil {
		return fail(stderr, err)
	}

	ctx := context.Background()
	var run func(client.Object) result
	if *fromCluster {
		run, err = clusterRun(ctx, parts, objs, *kubeconfig, *class)
	} else {
		run, err = offlineRun(scheme, index, objs, *data, *showValues)
	}
	if err != nil {
		return fail(stderr, err)
	}
	var outs []any
	code := 0
	for _, o := range syncing {
		res := run(o)
		switch {
		case res.failed != "":
			fmt.Fprintf(stderr, "eso render: %s: %s\n", res.what, res.failed)
			code = 1
		case res.out == nil:
			fmt.Fprintf(stderr, "eso render: %s: %s\n", res.what, res.note)
		default:
			outs = append(outs, res.out)
		}
	}
	if err := print(stdout, *output, outs); err != nil {
		return fail(stderr, err)
	}
	return code
}

// prepare gives the objects of the files without a namespace the
// namespace -n names, drops what the API server would set, and returns
// the ExternalSecrets and PushSecrets to sync, in the files' order.
func prepare(objs []client.Object, namespace string, fromCluster bool) ([]client.Object, error) {
	var syncing []client.Object
	for _, o := range objs {
		if namespaced(o) && o.GetNamespace() == "" {
			o.SetNamespace(namespace)
		}
		o.SetResourceVersion("")
		switch o := o.(type) {
		case *corev1.Secret:
			// As the API server stores it.
			for k, v := range o.StringData {
				if o.Data == nil {
					o.Data = map[string][]byte{}
				}
				o.Data[k] = []byte(v)
			}
			o.StringData = nil
		case *esv1.ExternalSecret:
			for i, df := range o.Spec.DataFrom {
				if df.SourceRef != nil && df.SourceRef.GeneratorRef != nil {
					return nil, fmt.Errorf("ExternalSecret %s/%s: dataFrom[%d] names generator %s %s: eso render does not run generators, whose values differ on every run",
						o.Namespace, o.Name, i, df.SourceRef.GeneratorRef.Kind, df.SourceRef.GeneratorRef.Name)
				}
			}
			syncing = append(syncing, o)
		case *esv1alpha1.PushSecret:
			if fromCluster {
				return nil, fmt.Errorf("PushSecret %s/%s: a PushSecret renders only offline (--data): through the cluster's stores it would push", o.Namespace, o.Name)
			}
			if o.Spec.Selector.GeneratorRef != nil {
				return nil, fmt.Errorf("PushSecret %s/%s: selector.generatorRef: eso render does not run generators, whose values differ on every run", o.Namespace, o.Name)
			}
			syncing = append(syncing, o)
		}
	}
	if len(syncing) == 0 {
		return nil, errors.New("the files hold no ExternalSecret or PushSecret")
	}
	return syncing, nil
}

// namespaced reports whether o's kind lives in a namespace.
func namespaced(o client.Object) bool {
	switch o.(type) {
	case *corev1.Namespace, *ssv2.ClusterSecretStore, *esv1.ClusterExternalSecret, *esv1alpha1.ClusterPushSecret, *genv2.ClusterGenerator:
		return false
	}
	return true
}

// offlineRun syncs against the data file.
func offlineRun(scheme *runtime.Scheme, index *plugin.Index, objs []client.Object, dataFile string, showValues bool) (func(client.Object) result, error) {
	fake, ok := index.Lookup(plugin.RoleProvider, fakeKind)
	if !ok {
		return nil, errors.New("the Fake provider, which serves the data file, is not in this binary")
	}
	data, err := readData(dataFile)
	if err != nil {
		return nil, err
	}
	w, err := offlineWorld(scheme, objs, data, fake)
	if err != nil {
		return nil, err
	}
	return func(o client.Object) result {
		if ps, ok := o.(*esv1alpha1.PushSecret); ok {
			return syncPushSecret(context.Background(), w, ps, showValues)
		}
		return syncExternalSecret(context.Background(), w, w.local, o.(*esv1.ExternalSecret))
	}, nil
}

// clusterRun syncs through the stores of the cluster kubeconfig names,
// reading only: the objects of the files, and the Secret written, stay in
// memory.
func clusterRun(ctx context.Context, parts binary.Parts, objs []client.Object, kubeconfig, class string) (func(client.Object) result, error) {
	scheme := parts.Scheme
	rc, err := manager.RESTConfig(config.Config{Kubeconfig: kubeconfig})
	if err != nil {
		return nil, err
	}
	cluster, err := client.New(rc, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	local, err := newLocal(scheme, objs)
	if err != nil {
		return nil, err
	}
	// As eso resolves: a storeRef without apiVersion names a v1 store first.
	plugins := plugin.NewPlugins(parts.Index, plugin.Deps{Client: cluster, APIReader: cluster, RESTConfig: rc})
	w := &world{local: local, resolver: stores.NewResolver(cluster, plugins, stores.NewClientCache(), class).WithAPIs(parts.StoreAPIs...)}
	return func(o client.Object) result {
		es := o.(*esv1.ExternalSecret)
		reader := layeredReader{Reader: local, cluster: cluster, target: types.NamespacedName{Namespace: es.Namespace, Name: es.TargetName()}}
		return syncExternalSecret(ctx, w, reader, es)
	}, nil
}

// print writes outs as YAML documents, or as JSON: one object, or a List
// of several.
func print(w io.Writer, format string, outs []any) error {
	var docs []any
	for _, o := range outs {
		doc, err := plain(o)
		if err != nil {
			return err
		}
		docs = append(docs, doc)
	}
	if format == "json" {
		var v any = map[string]any{"apiVersion": "v1", "kind": "List", "items": docs}
		if len(docs) == 1 {
			v = docs[0]
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	for i, doc := range docs {
		out, err := yaml.Marshal(doc)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
	return nil
}

// plain is o as a JSON map, without the creationTimestamp: null an
// object never sent to an API server has.
func plain(o any) (map[string]any, error) {
	raw, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if md, ok := m["metadata"].(map[string]any); ok && md["creationTimestamp"] == nil {
		delete(md, "creationTimestamp")
	}
	return m, nil
}

func usageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "eso render: %s\nusage: %s (eso render --help)\n", msg, Usage)
	return 2
}

func fail(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, "eso render:", err)
	return 1
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
