package externalsecret

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/secrettemplate"
)

// render applies target.template to the fetched data, reading the ConfigMaps
// and Secrets its templateFrom names from the ExternalSecret's own namespace.
// Without a template the Secret carries the ExternalSecret's own labels
// and annotations, as upstream, except those that instruct eso or kubectl:
// a force-sync would otherwise rewrite the Secret (and restart whatever
// watches it) on every forced read. A Secret merged into gets them too, as
// upstream; applyMetadata leaves its own labels and annotations in place.
// The render charges b, the sync's budget.
func (r *Reconciler) render(ctx context.Context, b *secrettemplate.Budget, es *esv1.ExternalSecret, data map[string][]byte) (*secrettemplate.Result, error) {
	if es.Spec.Target.Template == nil {
		annotations := notEsos(es.Annotations)
		for _, k := range notCopied {
			delete(annotations, k)
		}
		return &secrettemplate.Result{Type: corev1.SecretTypeOpaque, Data: data,
			Labels: notEsos(es.Labels), Annotations: annotations}, nil
	}
	src, err := secrettemplate.ReadSources(ctx, r.APIReader, b, es.Namespace, es.Spec.Target.Template)
	if err != nil {
		return nil, err
	}
	res, err := secrettemplate.RenderWith(b, es.Spec.Target.Template, data, src)
	if err != nil {
		return nil, err
	}
	res.Labels, res.Annotations = notEsos(res.Labels), notEsos(res.Annotations)
	return res, nil
}

// notCopied are the ExternalSecret annotations that stay off its Secret.
var notCopied = []string{"force-sync", esv1.AnnotationForceSync, corev1.LastAppliedConfigAnnotation}

// reservedPrefix marks the labels and annotations eso sets on a Secret to
// record what it wrote, and generatorPrefix the generator states it holds;
// an ExternalSecret's own never set them.
const (
	reservedPrefix  = "reconcile.external-secrets.io/"
	generatorPrefix = "generator.external-secrets.io/"
)

// notEsos drops, from metadata an ExternalSecret or its template asks
// for, the keys eso itself sets (its marks and the generator states the
// rotation adds afterwards).
func notEsos(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if !strings.HasPrefix(k, reservedPrefix) && !strings.HasPrefix(k, generatorPrefix) {
			out[k] = v
		}
	}
	return out
}
