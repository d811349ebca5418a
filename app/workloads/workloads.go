// Package workloads knows the workloads eso may restart when a Secret they
// use changes (Deployments, StatefulSets, DaemonSets): which Secrets each
// asks to be restarted for, and what of them eso's cache keeps.
//
// A workload asks with Reloader's annotations, so that manifests written
// for Reloader keep working unchanged:
//   - secret.reloader.stakater.com/reload: "a,b" names Secrets;
//   - reloader.stakater.com/auto or secret.reloader.stakater.com/auto:
//     "true" asks for every Secret its Pod template uses (volumes,
//     projected volumes, env and envFrom of every container).
//
// An ExternalSecret may also name workloads (spec.rolloutRestartTargets);
// that side is the rollout controller's.
package workloads

import (
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Reloader's annotations, as Reloader reads them.
const (
	AnnotationReload     = "secret.reloader.stakater.com/reload"
	AnnotationAuto       = "reloader.stakater.com/auto"
	AnnotationSecretAuto = "secret.reloader.stakater.com/auto"
)

// AnnotationRestartedFor is eso's record on a workload: the data-hash of
// each Secret it asks for, as of its last restart (or as first seen). A
// Secret whose hash differs from the record has changed since, which is
// what restarts the workload; kept in the workload's own metadata, so it
// survives eso's restarts and is written in the same patch as the restart.
const AnnotationRestartedFor = "rollout.eso.external-secrets.io/restarted-for"

// AnnotationRestartedAt is what `kubectl rollout restart` sets on the Pod
// template, with the time as RFC 3339: eso restarts the same way.
const AnnotationRestartedAt = "kubectl.kubernetes.io/restartedAt"

// MaxAsked is the most Secrets one workload may ask for; names past it are
// ignored. A workload's annotations and Pod template are its author's to
// fill, so every list read from them is bounded.
const MaxAsked = 64

// Kind is one kind of workload eso restarts.
type Kind struct {
	Name    string
	New     func() client.Object
	NewList func() client.ObjectList
	// Items are a list's workloads.
	Items func(client.ObjectList) []client.Object
	// Template is the workload's Pod template.
	Template func(client.Object) *corev1.PodTemplateSpec
	// Paused: `kubectl rollout restart` refuses a paused Deployment, and so
	// does eso until it is resumed.
	Paused func(client.Object) bool
}

// Kinds are the workloads eso restarts, by name.
var Kinds = []Kind{
	{
		Name: "Deployment", New: func() client.Object { return &appsv1.Deployment{} },
		NewList: func() client.ObjectList { return &appsv1.DeploymentList{} },
		Items:   func(l client.ObjectList) []client.Object { return pointers(l.(*appsv1.DeploymentList).Items) },
		Template: func(o client.Object) *corev1.PodTemplateSpec {
			return &o.(*appsv1.Deployment).Spec.Template
		},
		Paused: func(o client.Object) bool { return o.(*appsv1.Deployment).Spec.Paused },
	},
	{
		Name: "StatefulSet", New: func() client.Object { return &appsv1.StatefulSet{} },
		NewList: func() client.ObjectList { return &appsv1.StatefulSetList{} },
		Items:   func(l client.ObjectList) []client.Object { return pointers(l.(*appsv1.StatefulSetList).Items) },
		Template: func(o client.Object) *corev1.PodTemplateSpec {
			return &o.(*appsv1.StatefulSet).Spec.Template
		},
		Paused: func(client.Object) bool { return false },
	},
	{
		Name: "DaemonSet", New: func() client.Object { return &appsv1.DaemonSet{} },
		NewList: func() client.ObjectList { return &appsv1.DaemonSetList{} },
		Items:   func(l client.ObjectList) []client.Object { return pointers(l.(*appsv1.DaemonSetList).Items) },
		Template: func(o client.Object) *corev1.PodTemplateSpec {
			return &o.(*appsv1.DaemonSet).Spec.Template
		},
		Paused: func(client.Object) bool { return false },
	},
}

// Named is the Kind called name, or false.
func Named(name string) (Kind, bool) {
	i := slices.IndexFunc(Kinds, func(k Kind) bool { return k.Name == name })
	if i < 0 {
		return Kind{}, false
	}
	return Kinds[i], true
}

func pointers[T any, P interface {
	*T
	client.Object
}](items []T) []client.Object {
	out := make([]client.Object, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}

// Asked are the names of the Secrets obj asks to be restarted for through
// its own annotations, sorted, without repeats, at most MaxAsked.
func Asked(k Kind, obj client.Object) []string {
	ann := obj.GetAnnotations()
	var names []string
	for _, n := range strings.Split(ann[AnnotationReload], ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if isTrue(ann[AnnotationAuto]) || isTrue(ann[AnnotationSecretAuto]) {
		names = append(names, used(&k.Template(obj).Spec)...)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	return names[:min(len(names), MaxAsked)]
}

func isTrue(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "true") }

// used are the Secrets a Pod spec reads: secret and projected volumes, env
// valueFrom.secretKeyRef and envFrom.secretRef of every container.
func used(spec *corev1.PodSpec) []string {
	var names []string
	for _, v := range spec.Volumes {
		if v.Secret != nil {
			names = append(names, v.Secret.SecretName)
		}
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					names = append(names, s.Secret.Name)
				}
			}
		}
	}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				names = append(names, e.ValueFrom.SecretKeyRef.Name)
			}
		}
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil {
				names = append(names, e.SecretRef.Name)
			}
		}
	}
	return slices.DeleteFunc(names, func(n string) bool { return n == "" })
}
