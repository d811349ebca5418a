package workloads

import (
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// maxAnnotation is the most bytes of one Reloader annotation's value the
// cache holds, cut at a comma: far more than MaxAsked names need.
const maxAnnotation = 16 << 10

// maxRecord is the most bytes of eso's record the cache holds: a record eso
// writes (MaxAsked names of at most 253 bytes with their hashes) is smaller.
// A longer one was not written by eso and is dropped: it counts as none.
const maxRecord = 32 << 10

// Trim is the cache's transform for workloads, which anyone who may create
// one controls. Of each it keeps the name, namespace, UID, resourceVersion,
// generation and deletion time; the annotations that ask (on it and on its
// Pod template, each at most maxAnnotation) and eso's record (at most
// maxRecord); the Pod template's restartedAt; whether it is paused; and,
// only when it asks for every Secret it uses, the names of those Secrets
// (at most MaxAsked). Everything else is dropped: eso never writes a cached
// workload back, it patches.
func Trim(obj any) (any, error) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		o.Spec = appsv1.DeploymentSpec{Paused: o.Spec.Paused, Template: trimTemplate("Deployment", o)}
		o.Status = appsv1.DeploymentStatus{}
		trimMeta(&o.ObjectMeta)
	case *appsv1.StatefulSet:
		o.Spec = appsv1.StatefulSetSpec{Template: trimTemplate("StatefulSet", o)}
		o.Status = appsv1.StatefulSetStatus{}
		trimMeta(&o.ObjectMeta)
	case *appsv1.DaemonSet:
		o.Spec = appsv1.DaemonSetSpec{Template: trimTemplate("DaemonSet", o)}
		o.Status = appsv1.DaemonSetStatus{}
		trimMeta(&o.ObjectMeta)
	}
	return obj, nil
}

func trimMeta(m *metav1.ObjectMeta) {
	kept := keep(m.Annotations, asking)
	if v, ok := m.Annotations[AnnotationRestartedFor]; ok && len(v) <= maxRecord {
		kept[AnnotationRestartedFor] = v
	}
	*m = metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, DeletionTimestamp: m.DeletionTimestamp, Annotations: kept}
}

// keep are the annotations of keys, each cut to maxAnnotation at a comma.
func keep(annotations map[string]string, keys []string) map[string]string {
	kept := map[string]string{}
	for _, k := range keys {
		if v, ok := annotations[k]; ok {
			if len(v) > maxAnnotation {
				v = v[:strings.LastIndexByte(v[:maxAnnotation], ',')+1]
			}
			kept[k] = v
		}
	}
	return kept
}

// trimTemplate is the part of obj's Pod template eso reads: the asking
// annotations and restartedAt, and the names of the Secrets it uses only
// when it asks for all of them (as Secret volumes, the shortest form).
func trimTemplate(kind string, obj client.Object) corev1.PodTemplateSpec {
	k, _ := Named(kind)
	t := k.Template(obj)
	out := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
		Annotations: keep(t.Annotations, append(slices.Clone(asking), AnnotationRestartedAt))}}
	if auto(annotation(k, obj, AnnotationAuto)) || auto(annotation(k, obj, AnnotationSecretAuto)) {
		names := used(&t.Spec)
		slices.Sort(names)
		names = slices.Compact(names)
		for _, n := range names[:min(len(names), MaxAsked)] {
			out.Spec.Volumes = append(out.Spec.Volumes, corev1.Volume{VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: n}}})
		}
	}
	return out
}
