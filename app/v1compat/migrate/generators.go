package migrate

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	upgen "github.com/eso-dev/eso/apis/upstreamv1/generators"
	"github.com/eso-dev/eso/app/v1compat"
)

// Upstream's generator objects (generators.external-secrets.io/v1alpha1)
// move to eso's kinds of the same name and namespace, with the spec the v1
// layer serves them with; then the upstream object is deleted. The
// references to it are left as they are: a reference with upstream's
// apiVersion that finds no upstream object resolves to eso's kind of the
// same name, so no ExternalSecret or PushSecret changes, and none
// generates a value again because of the move.

// GeneratorMove is one upstream generator object and the eso configuration
// it becomes.
type GeneratorMove struct {
	From, To client.Object
}

// planGenerators plans the moves of objs' upstream generators; one whose
// eso kind of the same name exists with another spec is refused.
func planGenerators(p *Plan, objs Objects, present map[string]client.Object, opts Options) {
	kinds := map[string]func(client.Object) (string, client.Object, error){}
	for _, k := range v1compat.GeneratorKinds() {
		if !k.Cluster {
			kinds[k.Kind] = k.Translate
		}
	}
	if opts.Direction == ToV1 {
		planRestores(p, objs)
		return
	}
	for _, from := range objs.Generators {
		what := describe(from)
		translate, ok := kinds[from.GetObjectKind().GroupVersionKind().Kind]
		if !ok {
			continue
		}
		kind, to, err := translate(from)
		if err != nil {
			p.Refused = append(p.Refused, what+": "+err.Error())
			continue
		}
		to.GetObjectKind().SetGroupVersionKind(genv1.GroupVersion.WithKind(kind))
		to.SetUID("")
		to.SetResourceVersion("")
		to.SetGeneration(0)
		to.SetCreationTimestamp(metav1.Time{})
		to.SetManagedFields(nil)
		to.SetOwnerReferences(nil)
		to.SetFinalizers(nil) // another tool's finalizer is for the object it put it on
		to.SetDeletionTimestamp(nil)
		annotations := map[string]string{}
		for k, v := range from.GetAnnotations() {
			annotations[k] = v
		}
		annotations[MigratedFrom] = from.GetObjectKind().GroupVersionKind().GroupVersion().String()
		to.SetAnnotations(annotations)
		// A copy an earlier run made (the upstream object changed before it
		// could be deleted) is brought in line; any other is never taken.
		if have, ok := present[objectKey(to)]; ok && have.GetAnnotations()[MigratedFrom] != to.GetAnnotations()[MigratedFrom] {
			if err := same(have, to, opts.Defaults); err != nil {
				p.Refused = append(p.Refused, what+": "+err.Error())
				continue
			}
		}
		p.Generators = append(p.Generators, GeneratorMove{From: from, To: to})
	}
	for _, cg := range objs.ClusterGenerators {
		p.Notes = append(p.Notes, describe(&cg)+": an upstream ClusterGenerator stays, served as it is: "+
			"eso's ClusterGenerator is another kind, and moving its references would generate their values again")
	}
}

// planRestores plans a rollback: each generator configuration a migration
// made whose upstream object is gone is created again as upstream's kind,
// with its spec (eso's copy stays; an upstream object is what its
// references find first).
func planRestores(p *Plan, objs Objects) {
	upstream := map[string]bool{}
	for _, o := range objs.Generators {
		upstream[o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetNamespace()+"/"+o.GetName()] = true
	}
	for _, o := range objs.Present {
		gvk := o.GetObjectKind().GroupVersionKind()
		if gvk.GroupVersion() != genv1.GroupVersion || o.GetAnnotations()[MigratedFrom] != upgen.GroupVersion.String() ||
			upstream[gvk.Kind+"/"+o.GetNamespace()+"/"+o.GetName()] {
			continue
		}
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			p.Refused = append(p.Refused, describe(o)+": "+err.Error())
			continue
		}
		restored := &unstructured.Unstructured{Object: map[string]any{"spec": raw["spec"]}}
		restored.SetGroupVersionKind(upgen.GroupVersion.WithKind(gvk.Kind))
		restored.SetNamespace(o.GetNamespace())
		restored.SetName(o.GetName())
		restored.SetLabels(o.GetLabels())
		p.Restore = append(p.Restore, restored)
	}
}

// restoreGenerators creates the upstream objects a rollback restores; one
// there already is left as it is.
func restoreGenerators(ctx context.Context, c client.Client, restores []client.Object, log io.Writer) []error {
	var errs []error
	for _, o := range restores {
		switch err := c.Create(ctx, o.DeepCopyObject().(client.Object)); {
		case apierrors.IsAlreadyExists(err):
		case err != nil:
			errs = append(errs, fmt.Errorf("restoring %s: %w", describe(o), err))
		default:
			fmt.Fprintf(log, "restored %s\n", describe(o))
		}
	}
	return errs
}

// moveGenerators carries out the moves: eso's configuration is created
// (one already there must have the planned spec), then the upstream object
// is deleted, guarded by the UID and resourceVersion read, so an object
// edited since is left for another run.
func moveGenerators(ctx context.Context, c client.Client, moves []GeneratorMove, log io.Writer) []error {
	defaults := ServerDefaults(ctx, c)
	var errs []error
	for _, m := range moves {
		err := c.Create(ctx, m.To.DeepCopyObject().(client.Object))
		if apierrors.IsAlreadyExists(err) {
			err = alignCopy(ctx, c, m.To, defaults)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("creating %s: %w; %s stays", describe(m.To), err, describe(m.From)))
			continue
		}
		fmt.Fprintf(log, "created %s\n", describe(m.To))
		uid, version := m.From.GetUID(), m.From.GetResourceVersion()
		err = c.Delete(ctx, m.From.DeepCopyObject().(client.Object), client.Preconditions{UID: &uid, ResourceVersion: &version})
		switch {
		case apierrors.IsNotFound(err):
		case apierrors.IsConflict(err):
			errs = append(errs, fmt.Errorf("deleting %s: it changed since it was read: run eso migrate again, which brings its copy in line", describe(m.From)))
		case err != nil:
			errs = append(errs, fmt.Errorf("deleting %s: %w", describe(m.From), err))
		default:
			fmt.Fprintf(log, "deleted %s (its references now resolve to %s)\n", describe(m.From), describe(m.To))
		}
	}
	return errs
}

// alignCopy accepts an object of want's name that is there: a copy an
// earlier run made gets want's spec, any other must hold it already.
func alignCopy(ctx context.Context, c client.Client, want client.Object, defaults func(client.Object) (client.Object, error)) error {
	have := want.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(want), have); err != nil {
		return err
	}
	if have.GetAnnotations()[MigratedFrom] != want.GetAnnotations()[MigratedFrom] {
		return same(have, want, defaults)
	}
	update := want.DeepCopyObject().(client.Object)
	update.SetResourceVersion(have.GetResourceVersion())
	update.SetUID(have.GetUID())
	return c.Update(ctx, update)
}

// readGenerators lists upstream's generator objects (of namespace, or all)
// and eso's generator configurations already there.
func readGenerators(ctx context.Context, c client.Reader, scheme *runtime.Scheme, namespace string, o *Objects) error {
	for _, gv := range []struct {
		gv      schema.GroupVersion
		present bool
	}{{upgen.GroupVersion, false}, {genv1.GroupVersion, true}} {
		for _, kind := range listedKinds(scheme, gv.gv) {
			if kind == "ClusterGenerator" {
				continue
			}
			items, err := listKind(ctx, c, scheme, gv.gv.WithKind(kind), client.InNamespace(namespace))
			if err != nil {
				return err
			}
			if gv.present {
				o.Present = append(o.Present, items...)
			} else {
				o.Generators = append(o.Generators, items...)
			}
		}
	}
	if namespace == "" {
		var cgs upgen.ClusterGeneratorList
		if err := c.List(ctx, &cgs); err != nil && !meta.IsNoMatchError(err) {
			return fmt.Errorf("listing upstream ClusterGenerators: %w", err)
		}
		for i := range cgs.Items {
			cgs.Items[i].SetGroupVersionKind(upgen.GroupVersion.WithKind("ClusterGenerator"))
		}
		o.ClusterGenerators = cgs.Items
	}
	return nil
}
