package externalsecret

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/secrettemplate"
	"github.com/eso-dev/eso/providers"
)

// render applies target.template to the fetched data, reading the ConfigMaps
// and Secrets its templateFrom names from the ExternalSecret's own namespace.
func (r *Reconciler) render(ctx context.Context, es *esv1.ExternalSecret, data map[string][]byte) (*secrettemplate.Result, error) {
	tpl := es.Spec.Target.Template
	src := secrettemplate.Sources{ConfigMaps: map[string]map[string]string{}, Secrets: map[string]map[string][]byte{}}
	if tpl != nil {
		for _, from := range tpl.TemplateFrom {
			switch {
			case from.ConfigMap != nil:
				var cm corev1.ConfigMap
				if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: es.Namespace, Name: from.ConfigMap.Name}, &cm); err != nil {
					return nil, templateSourceError("ConfigMap", es.Namespace, from.ConfigMap.Name, err)
				}
				src.ConfigMaps[cm.Name] = cm.Data
			case from.Secret != nil:
				var s corev1.Secret
				if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: es.Namespace, Name: from.Secret.Name}, &s); err != nil {
					return nil, templateSourceError("Secret", es.Namespace, from.Secret.Name, err)
				}
				src.Secrets[s.Name] = s.Data
			}
		}
	}
	return secrettemplate.Render(tpl, data, src)
}

// templateSourceError: a missing source is a template error that fixes
// itself when the source is created, which the error names so eso watches
// for it; any other error reading it (a timeout, throttling) passes by
// itself and is retried with backoff.
func templateSourceError(kind, namespace, name string, err error) error {
	if apierrors.IsNotFound(err) {
		return providers.Awaiting(providers.ObjectRef{Kind: kind, Namespace: namespace, Name: name},
			fmt.Errorf("%w: template %s %s not found", secrettemplate.ErrSourceNotFound, kind, name))
	}
	return fmt.Errorf("reading template %s %s: %w", kind, name, err)
}
