package migrate

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	for _, from := range objs.Generators {
		what := describe(from)
		if opts.Direction == ToV1 {
			p.Notes = append(p.Notes, what+": generators are not moved back; eso's kind of the same name serves its references")
			continue
		}
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
		annotations := map[string]string{}
		for k, v := range from.GetAnnotations() {
			annotations[k] = v
		}
		annotations[MigratedFrom] = from.GetObjectKind().GroupVersionKind().GroupVersion().String()
		to.SetAnnotations(annotations)
		if have, ok := present[objectKey(to)]; ok {
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
			err = sameAsPresent(ctx, c, m.To, defaults)
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
			errs = append(errs, fmt.Errorf("deleting %s: it changed since it was read: run eso migrate again", describe(m.From)))
		case err != nil:
			errs = append(errs, fmt.Errorf("deleting %s: %w", describe(m.From), err))
		default:
			fmt.Fprintf(log, "deleted %s (its references now resolve to %s)\n", describe(m.From), describe(m.To))
		}
	}
	return errs
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
