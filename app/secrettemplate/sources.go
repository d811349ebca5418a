package secrettemplate

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

// ReadSources reads the ConfigMaps and Secrets tpl's templateFrom names, from
// namespace only: a template never reads another namespace. r is the API
// reader (eso caches neither). Each is read once however often it is
// named, and what they hold is charged to b, the sync's budget.
func ReadSources(ctx context.Context, r client.Reader, b *Budget, namespace string, tpl *esv1.ExternalSecretTemplate) (Sources, error) {
	src := Sources{ConfigMaps: map[string]map[string]string{}, Secrets: map[string]map[string][]byte{}}
	if tpl == nil {
		return src, nil
	}
	for _, from := range tpl.TemplateFrom {
		switch {
		case from.ConfigMap != nil && src.ConfigMaps[from.ConfigMap.Name] != nil,
			from.Secret != nil && src.Secrets[from.Secret.Name] != nil:
			continue // read already
		case from.ConfigMap != nil:
			var cm corev1.ConfigMap
			if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: from.ConfigMap.Name}, &cm); err != nil {
				return src, sourceError("ConfigMap", namespace, from.ConfigMap.Name, err)
			}
			if err := b.Read("templateFrom ConfigMap "+cm.Name, int64(cm.Size())); err != nil {
				return src, err
			}
			src.ConfigMaps[cm.Name] = cm.Data
			if cm.Data == nil {
				src.ConfigMaps[cm.Name] = map[string]string{}
			}
			src.Versions = append(src.Versions, "ConfigMap/"+cm.Name+"="+cm.ResourceVersion)
		case from.Secret != nil:
			var s corev1.Secret
			if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: from.Secret.Name}, &s); err != nil {
				return src, sourceError("Secret", namespace, from.Secret.Name, err)
			}
			if err := b.Read("templateFrom Secret "+s.Name, int64(s.Size())); err != nil {
				return src, err
			}
			src.Secrets[s.Name] = s.Data
			if s.Data == nil {
				src.Secrets[s.Name] = map[string][]byte{}
			}
			src.Versions = append(src.Versions, "Secret/"+s.Name+"="+s.ResourceVersion)
		}
	}
	return src, nil
}

// sourceError: a missing source is a template error that fixes itself when
// the source is created, which the error names so eso watches for it; any
// other error reading it (a timeout, throttling) passes by itself and is
// retried with backoff.
func sourceError(kind, namespace, name string, err error) error {
	if apierrors.IsNotFound(err) {
		return plugin.Awaiting(plugin.ObjectRef{Kind: kind, Namespace: namespace, Name: name},
			fmt.Errorf("%w: template %s %s not found", ErrSourceNotFound, kind, name))
	}
	return fmt.Errorf("reading template %s %s: %w", kind, name, err)
}

// DataSize is the bytes of a Secret's keys and values.
func DataSize(data map[string][]byte) int64 {
	var n int64
	for k, v := range data {
		n += int64(len(k) + len(v))
	}
	return n
}
