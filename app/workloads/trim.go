package workloads

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxAnnotation is the most bytes of one kept annotation's value the cache
// holds: far more than MaxAsked names need.
const maxAnnotation = 16 << 10

// Trim is the cache's transform for workloads: of each it keeps the name,
// namespace, UID, resourceVersion, generation and deletion time, the
// annotations that ask for restarts and eso's record, the Secret
// references of its Pod template and whether it is paused. Everything else
// (containers' images, commands, resources, status, ...) is dropped: eso
// never writes a cached workload back, it patches.
func Trim(obj any) (any, error) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		trimMeta(&o.ObjectMeta)
		o.Spec = appsv1.DeploymentSpec{Paused: o.Spec.Paused, Template: trimTemplate(o.Spec.Template)}
		o.Status = appsv1.DeploymentStatus{}
	case *appsv1.StatefulSet:
		trimMeta(&o.ObjectMeta)
		o.Spec = appsv1.StatefulSetSpec{Template: trimTemplate(o.Spec.Template)}
		o.Status = appsv1.StatefulSetStatus{}
	case *appsv1.DaemonSet:
		trimMeta(&o.ObjectMeta)
		o.Spec = appsv1.DaemonSetSpec{Template: trimTemplate(o.Spec.Template)}
		o.Status = appsv1.DaemonSetStatus{}
	}
	return obj, nil
}

func trimMeta(m *metav1.ObjectMeta) {
	kept := map[string]string{}
	for _, k := range []string{AnnotationReload, AnnotationAuto, AnnotationSecretAuto, AnnotationRestartedFor} {
		if v, ok := m.Annotations[k]; ok {
			if len(v) > maxAnnotation {
				v = v[:strings.LastIndexByte(v[:maxAnnotation], ',')+1]
			}
			kept[k] = v
		}
	}
	*m = metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, DeletionTimestamp: m.DeletionTimestamp, Annotations: kept}
}

// trimTemplate keeps the Pod template's Secret references only.
func trimTemplate(t corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	var out corev1.PodSpec
	for _, v := range t.Spec.Volumes {
		switch {
		case v.Secret != nil:
			out.Volumes = append(out.Volumes, corev1.Volume{VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: v.Secret.SecretName}}})
		case v.Projected != nil:
			p := &corev1.ProjectedVolumeSource{}
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					p.Sources = append(p.Sources, corev1.VolumeProjection{Secret: &corev1.SecretProjection{LocalObjectReference: s.Secret.LocalObjectReference}})
				}
			}
			out.Volumes = append(out.Volumes, corev1.Volume{VolumeSource: corev1.VolumeSource{Projected: p}})
		}
	}
	out.InitContainers = trimContainers(t.Spec.InitContainers)
	out.Containers = trimContainers(t.Spec.Containers)
	return corev1.PodTemplateSpec{Spec: out}
}

func trimContainers(cs []corev1.Container) []corev1.Container {
	var out []corev1.Container
	for _, c := range cs {
		var kept corev1.Container
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				kept.Env = append(kept.Env, corev1.EnvVar{ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: e.ValueFrom.SecretKeyRef.LocalObjectReference}}})
			}
		}
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil {
				kept.EnvFrom = append(kept.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: e.SecretRef.LocalObjectReference}})
			}
		}
		if kept.Env != nil || kept.EnvFrom != nil {
			out = append(out, kept)
		}
	}
	return out
}
