package manager

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// Anyone who may create a Secret may label it as eso's, so the Secrets in
// eso's cache are tenant-controlled input. The cache holds them as metadata
// only (the API server sends no data in their list and watch responses),
// and of that metadata only what eso reads, within SecretMetadataBound.
// Secret data is read by name from the API server, when it is needed.

// SecretGVK is core/v1 Secret, for the metadata-only objects eso caches.
var SecretGVK = corev1.SchemeGroupVersion.WithKind("Secret")

// SecretMetadataBound is the most bytes of labels, annotations (keys and
// values) and controller reference eso keeps in its cache per Secret. Past
// it the rest is dropped and the Secret carries AnnotationCacheTrimmed.
const SecretMetadataBound = 8 << 10

// AnnotationCacheTrimmed marks a cached Secret whose eso labels and
// annotations did not fit in SecretMetadataBound: what the cache holds of
// it is incomplete, so its readers read it from the API server instead. It
// exists only in eso's cache; one set on the Secret itself is dropped.
const AnnotationCacheTrimmed = "reconcile.external-secrets.io/cache-trimmed"

// esoPrefixes are the label and annotation prefixes eso reads on Secrets it
// manages (managed label, managed-by, data-hash, merged keys and digests,
// applied metadata, generator states).
var esoPrefixes = []string{"reconcile.external-secrets.io/", "generator.external-secrets.io/"}

// NewSecretMetadata is an empty metadata-only Secret, to read from the
// cache or the API server.
func NewSecretMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(SecretGVK)
	return m
}

// CacheTrimmed reports whether eso's cache holds only part of obj's eso
// metadata (see AnnotationCacheTrimmed).
func CacheTrimmed(obj metav1.Object) bool {
	_, ok := obj.GetAnnotations()[AnnotationCacheTrimmed]
	return ok
}

// TrimSecret is the cache's transform for Secrets: it keeps name,
// namespace, UID, resourceVersion, timestamps, the controller reference and
// eso's own labels and annotations, within SecretMetadataBound, and drops
// everything else (managedFields, other owners, finalizers, other labels
// and annotations). eso caches Secrets as metadata only; should a typed
// Secret reach the cache all the same, its data is dropped too.
func TrimSecret(obj any) (any, error) {
	switch o := obj.(type) {
	case *metav1.PartialObjectMetadata:
		trimSecretMeta(&o.ObjectMeta)
	case *corev1.Secret:
		trimSecretMeta(&o.ObjectMeta)
		o.Data, o.StringData = nil, nil
	}
	return obj, nil
}

func trimSecretMeta(m *metav1.ObjectMeta) {
	budget, trimmed := SecretMetadataBound, false
	var owners []metav1.OwnerReference
	if c := metav1.GetControllerOfNoCopy(m); c != nil {
		if n := len(c.APIVersion) + len(c.Kind) + len(c.Name) + len(c.UID); n <= budget {
			owners, budget = []metav1.OwnerReference{*c}, budget-n
		} else {
			trimmed = true
		}
	}
	labels := keepEsos(m.Labels, &budget, &trimmed)
	if len(labels) == 1 && labels[esv1.LabelManaged] == esv1.LabelManagedValue {
		labels = managedLabels
	}
	annotations := keepEsos(m.Annotations, &budget, &trimmed)
	if trimmed {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[AnnotationCacheTrimmed] = "true"
	}
	*m = metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
		OwnerReferences: owners, Labels: labels, Annotations: annotations,
	}
}

// managedLabels are the labels nearly every cached Secret keeps, eso's
// managed label alone: one map shared by all of them instead of one each
// (a map costs some 300 bytes, more than the rest of the entry). The
// cache's objects are never changed in place (its reads deep-copy them),
// so they may share it.
var managedLabels = map[string]string{esv1.LabelManaged: esv1.LabelManagedValue}

// keepEsos returns the entries of in under eso's prefixes, in key order,
// while they fit in budget; it sets trimmed when one did not.
func keepEsos(in map[string]string, budget *int, trimmed *bool) map[string]string {
	var out map[string]string
	for _, k := range slices.Sorted(maps.Keys(in)) {
		if k == AnnotationCacheTrimmed || !slices.ContainsFunc(esoPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			continue
		}
		n := len(k) + len(in[k])
		if n > *budget {
			*trimmed = true
			continue
		}
		*budget -= n
		if out == nil {
			out = map[string]string{}
		}
		out[k] = in[k]
	}
	return out
}

// uncached are the kinds the manager's client never reads from the cache:
// a typed Secret read goes to the API server, so no informer ever holds
// Secret data. (The client decides by kind, so metadata-only Secret reads
// through it go to the API server too; the cache itself serves those.)
func uncached() []client.Object { return []client.Object{&corev1.Secret{}} }
