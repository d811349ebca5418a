package migrate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv2 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	upgen "github.com/eso-dev/eso/apis/upstreamv1/generators"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
	"github.com/eso-dev/eso/app/v1compat"
)

// Scheme knows every kind a migration reads or writes.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{v1stores.AddToScheme, ssv2.AddToScheme, provv2.AddToScheme, esv1.AddToScheme, esv1alpha1.AddToScheme,
		upgen.AddToScheme, genv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Read lists what a migration needs from the cluster: everything, or with
// a namespace, the namespace's objects and the ClusterSecretStores (no
// ClusterExternalSecrets or ClusterPushSecrets, which span namespaces).
func Read(ctx context.Context, c client.Reader, namespace string) (Objects, error) {
	var o Objects
	var ss v1stores.SecretStoreList
	var css v1stores.ClusterSecretStoreList
	var es esv1.ExternalSecretList
	var ces esv1.ClusterExternalSecretList
	var ps esv1alpha1.PushSecretList
	var cps esv1alpha1.ClusterPushSecretList
	var v2ss ssv2.SecretStoreList
	var v2css ssv2.ClusterSecretStoreList
	lists := []client.ObjectList{&ss, &css, &es, &ps, &v2ss, &v2css}
	if namespace == "" {
		lists = append(lists, &ces, &cps)
	}
	for _, l := range lists {
		var opts []client.ListOption
		switch l.(type) {
		case *v1stores.SecretStoreList, *esv1.ExternalSecretList, *esv1alpha1.PushSecretList, *ssv2.SecretStoreList:
			opts = append(opts, client.InNamespace(namespace))
		}
		if err := c.List(ctx, l, opts...); err != nil && !meta.IsNoMatchError(err) {
			return o, fmt.Errorf("listing %T: %w", l, err)
		}
	}
	o.SecretStores, o.ClusterSecretStores = ss.Items, css.Items
	o.ExternalSecrets, o.ClusterExternalSecret, o.PushSecrets, o.ClusterPushSecrets = es.Items, ces.Items, ps.Items, cps.Items
	for i := range v2ss.Items {
		v2ss.Items[i].SetGroupVersionKind(ssv2.GroupVersion.WithKind("SecretStore"))
		o.Present = append(o.Present, &v2ss.Items[i])
	}
	for i := range v2css.Items {
		v2css.Items[i].SetGroupVersionKind(ssv2.GroupVersion.WithKind("ClusterSecretStore"))
		o.Present = append(o.Present, &v2css.Items[i])
	}
	// The provider configurations a migration would create, so one that is
	// there already is compared, never taken over.
	scheme, err := Scheme()
	if err != nil {
		return o, err
	}
	for _, kind := range ConfigKinds(scheme) {
		items, err := listKind(ctx, c, scheme, provv2.GroupVersion.WithKind(kind))
		if err != nil {
			return o, err
		}
		o.Present = append(o.Present, items...)
	}
	return o, readGenerators(ctx, c, scheme, namespace, &o)
}

// listKind lists the objects of kind gvk, each with its kind set; a kind
// the cluster does not serve lists nothing.
func listKind(ctx context.Context, c client.Reader, scheme *runtime.Scheme, gvk schema.GroupVersionKind, opts ...client.ListOption) ([]client.Object, error) {
	list, err := scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil, err
	}
	if err := c.List(ctx, list.(client.ObjectList), opts...); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]client.Object, 0, len(items))
	for _, item := range items {
		obj := item.(client.Object)
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		out = append(out, obj)
	}
	return out, nil
}

// Apply carries out p, store by store, so that one store that cannot be
// made or never becomes Ready holds back only its own users: it creates
// each store's objects (one already there must have exactly the planned
// spec, or that store is skipped), waits up to wait for the stores to be
// Ready, and moves each object's references as soon as every store they
// move to is Ready, guarded by the resourceVersion read so a concurrent
// edit is not overwritten. It returns what did not move, and why.
func Apply(ctx context.Context, c client.Client, p Plan, wait time.Duration, log io.Writer) error {
	generatorErrs := append(moveGenerators(ctx, c, p.Generators, log), restoreGenerators(ctx, c, p.Restore, log)...)
	a := &application{c: c, p: p, log: log, failed: createStores(ctx, c, p, log), errs: generatorErrs,
		ready: make([]bool, len(p.Stores)), waiting: make([]string, len(p.Stores)), moved: make([]bool, len(p.Repoint))}
	deadline := time.Now().Add(wait)
	for {
		pending := a.checkStores(ctx)
		a.repointReady(ctx) // every object whose stores are all Ready moves now
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			a.giveUp(wait)
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return a.result()
}

// createStores creates each store's objects; one already there must have
// exactly the planned spec. It returns, per store, why its users stay.
func createStores(ctx context.Context, c client.Client, p Plan, log io.Writer) []error {
	defaults := ServerDefaults(ctx, c)
	failed := make([]error, len(p.Stores))
	for i, sp := range p.Stores {
		for _, obj := range sp.Create {
			err := c.Create(ctx, obj.DeepCopyObject().(client.Object))
			if apierrors.IsAlreadyExists(err) {
				err = sameAsPresent(ctx, c, obj, defaults)
			}
			if err != nil {
				failed[i] = fmt.Errorf("creating %s: %w", describe(obj), err)
				break
			}
			fmt.Fprintf(log, "created %s\n", describe(obj))
		}
	}
	return failed
}

// application is where Apply stands: per store, whether it failed (why its
// users stay), is Ready or what its Ready condition last said; per object,
// whether it moved.
type application struct {
	c       client.Client
	p       Plan
	log     io.Writer
	failed  []error
	ready   []bool
	waiting []string
	moved   []bool
	errs    []error
}

// checkStores reads the Ready condition of each store still awaited and
// returns how many still are.
func (a *application) checkStores(ctx context.Context) int {
	pending := 0
	for i, sp := range a.p.Stores {
		if a.ready[i] || a.failed[i] != nil {
			continue
		}
		ok, msg, err := isReady(ctx, a.c, sp.Store)
		switch {
		case err != nil:
			a.failed[i] = fmt.Errorf("reading %s: %w", describe(sp.Store), err)
		case ok:
			a.ready[i] = true
		default:
			a.waiting[i] = msg
			pending++
		}
	}
	return pending
}

// repointReady moves the references of every object whose stores are all
// Ready.
func (a *application) repointReady(ctx context.Context) {
	for j, obj := range a.p.Repoint {
		if a.moved[j] || !allReady(a.p.Needs[j], a.ready) {
			continue
		}
		a.moved[j] = true
		if err := repoint(ctx, a.c, obj); err != nil {
			a.errs = append(a.errs, err)
			continue
		}
		fmt.Fprintf(a.log, "re-pointed %s\n", describe(obj))
	}
}

// giveUp fails the stores not Ready after wait.
func (a *application) giveUp(wait time.Duration) {
	for i, sp := range a.p.Stores {
		if !a.ready[i] && a.failed[i] == nil {
			a.failed[i] = fmt.Errorf("%s is not Ready after %s (%s)", describe(sp.Store), wait, a.waiting[i])
		}
	}
}

// result names each failed store with the objects that did not move for it.
func (a *application) result() error {
	errs := a.errs
	for i, err := range a.failed {
		if err == nil {
			continue
		}
		var users []string
		for j, obj := range a.p.Repoint {
			if !a.moved[j] && slices.Contains(a.p.Needs[j], i) {
				users = append(users, describe(obj))
			}
		}
		if len(users) > 0 {
			err = fmt.Errorf("%w; not re-pointed: %s", err, strings.Join(users, ", "))
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// allReady says whether every store of needs is Ready.
func allReady(needs []int, ready []bool) bool {
	for _, i := range needs {
		if !ready[i] {
			return false
		}
	}
	return true
}

// repoint writes obj's rewritten references. The update carries the
// resourceVersion read: the API server refuses it if the object changed since.
func repoint(ctx context.Context, c client.Client, obj client.Object) error {
	err := c.Update(ctx, obj.DeepCopyObject().(client.Object))
	if apierrors.IsConflict(err) {
		err = fmt.Errorf("it changed since it was read: run eso migrate again")
	}
	if err != nil {
		return fmt.Errorf("re-pointing %s: %w", describe(obj), err)
	}
	return nil
}

// sameAsPresent accepts an object that exists already only when its spec
// is exactly the one planned (a migration run again).
func sameAsPresent(ctx context.Context, c client.Client, want client.Object, defaults func(client.Object) (client.Object, error)) error {
	got := want.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
		return err
	}
	return same(got, want, defaults)
}

// ServerDefaults returns obj as the API server would store it: a dry run
// of its creation under a generated name (the name is taken), so that its
// schema's defaults are filled and nothing is written.
func ServerDefaults(ctx context.Context, c client.Client) func(client.Object) (client.Object, error) {
	return func(obj client.Object) (client.Object, error) {
		d := obj.DeepCopyObject().(client.Object)
		name := obj.GetName()
		if len(name) > 200 {
			name = name[:200]
		}
		d.SetName("")
		d.SetGenerateName(name + "-")
		d.SetResourceVersion("")
		if err := c.Create(ctx, d, client.DryRunAll); err != nil {
			return nil, err
		}
		return d, nil
	}
}

// specOf is an object's spec, for comparison.
func specOf(obj client.Object) any {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil
	}
	return raw["spec"]
}

// isReady reads a v2alpha1 store's Ready condition for its current generation.
func isReady(ctx context.Context, c client.Client, s client.Object) (bool, string, error) {
	got := s.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
		return false, "", err
	}
	var conds []metav1.Condition
	switch o := got.(type) {
	case *ssv2.SecretStore:
		conds = o.Status.Conditions
	case *ssv2.ClusterSecretStore:
		conds = o.Status.Conditions
	case *v1stores.SecretStore:
		conds = o.Status.Conditions
	case *v1stores.ClusterSecretStore:
		conds = o.Status.Conditions
	}
	cond := meta.FindStatusCondition(conds, ssv2.ConditionReady)
	if cond == nil || cond.ObservedGeneration != got.GetGeneration() {
		return false, "not checked yet", nil
	}
	return cond.Status == metav1.ConditionTrue, cond.Reason + ": " + cond.Message, nil
}

// describe names an object for the report.
func describe(obj client.Object) string {
	gvk := obj.GetObjectKind().GroupVersionKind()
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return gvk.Kind + "." + gvk.GroupVersion().String() + " " + name
}

// Print writes p for a person: what would be created and re-pointed, what
// is not migrated and why.
func Print(w io.Writer, p Plan) {
	for _, o := range p.Create {
		fmt.Fprintf(w, "create   %s\n", describe(o))
	}
	for _, c := range p.Changes {
		fmt.Fprintf(w, "change   %s\n", c)
	}
	for _, m := range p.Generators {
		fmt.Fprintf(w, "move     %s to %s (its references stay as they are)\n", describe(m.From), describe(m.To))
	}
	for _, o := range p.Restore {
		fmt.Fprintf(w, "restore  %s\n", describe(o))
	}
	for _, r := range p.Refused {
		fmt.Fprintf(w, "refused  %s (it and its users stay as they are)\n", r)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "note     %s\n", n)
	}
	if len(p.Create)+len(p.Changes)+len(p.Refused)+len(p.Generators)+len(p.Restore) == 0 {
		fmt.Fprintln(w, "nothing to migrate")
	}
}

// PrintYAML writes every object p creates or changes as YAML documents.
func PrintYAML(w io.Writer, p Plan) error {
	objs := append(append([]client.Object{}, p.Create...), p.Repoint...)
	for _, m := range p.Generators {
		objs = append(objs, m.To)
	}
	objs = append(objs, p.Restore...)
	for _, o := range objs {
		o = o.DeepCopyObject().(client.Object)
		o.SetResourceVersion("")
		o.SetManagedFields(nil)
		out, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "---\n%s", out)
	}
	return nil
}

// ReadFiles decodes the manifests of paths (files, or directories of .yaml
// and .yml files): the kinds a migration reads, others ignored.
func ReadFiles(paths []string) (Objects, error) {
	scheme, err := Scheme()
	if err != nil {
		return Objects{}, err
	}
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	var o Objects
	for _, path := range paths {
		files := []string{path}
		if info, err := os.Stat(path); err == nil && info.IsDir() {
			files = nil
			for _, pattern := range []string{"*.yaml", "*.yml"} {
				m, _ := filepath.Glob(filepath.Join(path, pattern))
				files = append(files, m...)
			}
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return o, err
			}
			reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
			for {
				doc, err := reader.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return o, fmt.Errorf("%s: %w", f, err)
				}
				if strings.TrimSpace(string(doc)) == "" {
					continue
				}
				obj, _, err := decoder.Decode(doc, nil, nil)
				if err != nil {
					continue // a kind a migration does not read
				}
				add(&o, obj)
			}
		}
	}
	return o, nil
}

// add files a decoded object under its kind.
func add(o *Objects, obj runtime.Object) {
	switch t := obj.(type) {
	case *v1stores.SecretStore:
		o.SecretStores = append(o.SecretStores, *t)
	case *v1stores.ClusterSecretStore:
		o.ClusterSecretStores = append(o.ClusterSecretStores, *t)
	case *esv1.ExternalSecret:
		o.ExternalSecrets = append(o.ExternalSecrets, *t)
	case *esv1.ClusterExternalSecret:
		o.ClusterExternalSecret = append(o.ClusterExternalSecret, *t)
	case *esv1alpha1.PushSecret:
		o.PushSecrets = append(o.PushSecrets, *t)
	case *esv1alpha1.ClusterPushSecret:
		o.ClusterPushSecrets = append(o.ClusterPushSecrets, *t)
	case *ssv2.SecretStore, *ssv2.ClusterSecretStore:
		o.Present = append(o.Present, t.(client.Object))
	case *upgen.ClusterGenerator:
		o.ClusterGenerators = append(o.ClusterGenerators, *t)
	case client.Object:
		switch t.GetObjectKind().GroupVersionKind().GroupVersion() {
		case provv2.GroupVersion, genv1.GroupVersion:
			o.Present = append(o.Present, t)
		case upgen.GroupVersion:
			o.Generators = append(o.Generators, t)
		}
	}
}

// ConfigKinds are the provider configuration kinds a migration may find
// already there, as scheme registers them: a kind added to
// apis/providers/v2alpha1 is read without a list here to keep.
func ConfigKinds(scheme *runtime.Scheme) []string { return listedKinds(scheme, provv2.GroupVersion) }

// listedKinds are the kinds of gv that scheme registers with a list kind.
func listedKinds(scheme *runtime.Scheme, gv schema.GroupVersion) []string {
	types := scheme.KnownTypes(gv)
	var kinds []string
	for kind := range types {
		if _, listed := types[kind+"List"]; listed {
			kinds = append(kinds, kind)
		}
	}
	slices.Sort(kinds)
	return kinds
}

// Run is `eso migrate`: newClient connects to the cluster named by a
// kubeconfig path ("" for the default).
func Run(args []string, stdout, stderr io.Writer, newClient func(kubeconfig string, scheme *runtime.Scheme) (client.Client, error)) int {
	fs := flag.NewFlagSet("eso migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var files stringList
	fs.Var(&files, "f", "read manifests from this file or directory instead of the cluster (repeatable); prints the migrated manifests")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	apply := fs.Bool("apply", false, "apply the migration to the cluster (default: print what it would do)")
	rollback := fs.Bool("rollback", false, "point references back at the v1 stores instead")
	output := fs.String("o", "text", "output: text (the plan) or yaml (the objects created and changed)")
	namespace := fs.String("namespace", "", "migrate only this namespace's objects (and the ClusterSecretStores they use)")
	configNS := fs.String("cluster-config-namespace", "", "namespace for the provider configurations of every ClusterSecretStore migrated (required when any is); "+
		"only cluster admins may write there (e.g. eso's own), as whoever can edit a configuration decides where every tenant's requests and credentials are sent. "+
		"Credentials still resolve where the v1 store's references say")
	wait := fs.Duration("wait", 2*time.Minute, "with --apply: how long to wait for each new store to be Ready; each store's users move once it is, the users of one that is not stay")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: eso migrate [-f path]... [--namespace ns] [--apply] [--rollback] [-o text|yaml] [--cluster-config-namespace ns]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 || (*output != "text" && *output != "yaml") || (*apply && len(files) > 0) {
		fs.Usage()
		return 2
	}
	opts := Options{ClusterConfigNamespace: *configNS, Endpoints: v1compat.EndpointsFromEnv(), OnlyUsed: *namespace != ""}
	if *rollback {
		opts.Direction = ToV1
	}
	ctx := context.Background()
	var objs Objects
	var c client.Client
	var err error
	if len(files) > 0 {
		objs, err = ReadFiles(files)
	} else {
		var scheme *runtime.Scheme
		if scheme, err = Scheme(); err == nil {
			if c, err = newClient(*kubeconfig, scheme); err == nil {
				objs, err = Read(ctx, c, *namespace)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "eso migrate:", err)
		return 1
	}
	if c != nil {
		opts.Defaults = ServerDefaults(ctx, c)
	}
	plan := Build(objs, opts)
	if len(plan.MissingConfigNamespace) > 0 {
		fmt.Fprintf(stderr, "eso migrate: --cluster-config-namespace is required to migrate ClusterSecretStores (%s): their provider configurations go only to the namespace it names, one only cluster admins write\n",
			strings.Join(plan.MissingConfigNamespace, ", "))
		return 2
	}
	if *output == "yaml" || len(files) > 0 {
		if err := PrintYAML(stdout, plan); err != nil {
			fmt.Fprintln(stderr, "eso migrate:", err)
			return 1
		}
		Print(stderr, plan)
		return 0
	}
	Print(stdout, plan)
	if !*apply {
		fmt.Fprintln(stdout, "(dry run: nothing changed; --apply applies it)")
		return 0
	}
	if err := Apply(ctx, c, plan, *wait, stdout); err != nil {
		fmt.Fprintln(stderr, "eso migrate:", err)
		return 1
	}
	return 0
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
