package externalsecret

import (
	"context"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/secrettemplate"
)

// render applies target.template to the fetched data, reading the ConfigMaps
// and Secrets its templateFrom names from the ExternalSecret's own namespace.
func (r *Reconciler) render(ctx context.Context, es *esv1.ExternalSecret, data map[string][]byte) (*secrettemplate.Result, error) {
	src, err := secrettemplate.ReadSources(ctx, r.APIReader, es.Namespace, es.Spec.Target.Template)
	if err != nil {
		return nil, err
	}
	return secrettemplate.Render(es.Spec.Target.Template, data, src)
}
