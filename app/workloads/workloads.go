// Package workloads knows the workloads eso may restart when a Secret they
// use changes (Deployments, StatefulSets, DaemonSets): which Secrets each
// asks to be restarted for, and what of them eso's cache keeps.
//
// A workload asks with Reloader's annotations, on itself or on its Pod
// template, so that manifests written for Reloader keep working:
//   - secret.reloader.stakater.com/reload: "a,b" names Secrets; an entry
//     with regular-expression syntax is a pattern, matched whole, as
//     Reloader matches every entry;
//   - reloader.stakater.com/auto or secret.reloader.stakater.com/auto:
//     "true" asks for every Secret its Pod template uses (volumes,
//     projected volumes, env and envFrom of every container), but those
//     secrets.exclude.reloader.stakater.com/reload lists.
//
// An ExternalSecret may also name workloads (spec.rolloutRestartTargets);
// that side is the rollout controller's.
package workloads

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Reloader's annotations, as Reloader reads them.
const (
	AnnotationReload     = "secret.reloader.stakater.com/reload"
	AnnotationAuto       = "reloader.stakater.com/auto"
	AnnotationSecretAuto = "secret.reloader.stakater.com/auto"
	AnnotationExclude    = "secrets.exclude.reloader.stakater.com/reload"
)

// asking are the annotations that ask, read on the workload and, where it
// has none of a key, on its Pod template.
var asking = []string{AnnotationReload, AnnotationAuto, AnnotationSecretAuto, AnnotationExclude}

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
	// Template is the workload's Pod template.
	Template func(client.Object) *corev1.PodTemplateSpec
	// Paused: `kubectl rollout restart` refuses a paused Deployment, and so
	// does eso until it is resumed.
	Paused func(client.Object) bool
}

// Kinds are the workloads eso restarts, by name.
var Kinds = []Kind{
	kindOf[appsv1.Deployment, appsv1.DeploymentList]("Deployment",
		func(d *appsv1.Deployment) *corev1.PodTemplateSpec { return &d.Spec.Template },
		func(d *appsv1.Deployment) bool { return d.Spec.Paused }),
	kindOf[appsv1.StatefulSet, appsv1.StatefulSetList]("StatefulSet",
		func(s *appsv1.StatefulSet) *corev1.PodTemplateSpec { return &s.Spec.Template }, nil),
	kindOf[appsv1.DaemonSet, appsv1.DaemonSetList]("DaemonSet",
		func(d *appsv1.DaemonSet) *corev1.PodTemplateSpec { return &d.Spec.Template }, nil),
}

// kindOf is the Kind of workload type W, listed as L; paused nil means
// the kind cannot be paused.
func kindOf[W, L any, PW interface {
	*W
	client.Object
}, PL interface {
	*L
	client.ObjectList
}](name string, template func(PW) *corev1.PodTemplateSpec, paused func(PW) bool) Kind {
	k := Kind{
		Name:     name,
		New:      func() client.Object { return PW(new(W)) },
		NewList:  func() client.ObjectList { return PL(new(L)) },
		Template: func(o client.Object) *corev1.PodTemplateSpec { return template(o.(PW)) },
		Paused:   func(client.Object) bool { return false },
	}
	if paused != nil {
		k.Paused = func(o client.Object) bool { return paused(o.(PW)) }
	}
	return k
}

// Items are the workloads of a list of any Kind.
func Items(list client.ObjectList) []client.Object {
	objs, _ := meta.ExtractList(list) // every Kind's list has Items
	out := make([]client.Object, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(client.Object))
	}
	return out
}

// Named is the Kind called name, or false.
func Named(name string) (Kind, bool) {
	i := slices.IndexFunc(Kinds, func(k Kind) bool { return k.Name == name })
	if i < 0 {
		return Kind{}, false
	}
	return Kinds[i], true
}

// Ask is what a workload asks to be restarted for: Secrets by name, and by
// pattern.
type Ask struct {
	// Names are sorted, without repeats.
	Names []string
	// Patterns match a Secret's whole name.
	Patterns []*regexp.Regexp
}

// Matches reports whether the Secret called name is asked for.
func (a Ask) Matches(name string) bool {
	if _, found := slices.BinarySearch(a.Names, name); found {
		return true
	}
	return slices.ContainsFunc(a.Patterns, func(re *regexp.Regexp) bool { return re.MatchString(name) })
}

// AsksAlike reports whether a and b, two versions of one workload, ask
// alike: the same asking annotations on them and on their Pod templates,
// the same Secret references (what the cache keeps of a template's spec)
// and the same pause.
func AsksAlike(k Kind, a, b client.Object) bool {
	ta, tb := k.Template(a), k.Template(b)
	return maps.Equal(keep(a.GetAnnotations(), asking), keep(b.GetAnnotations(), asking)) &&
		maps.Equal(keep(ta.Annotations, asking), keep(tb.Annotations, asking)) &&
		equality.Semantic.DeepEqual(ta.Spec, tb.Spec) && k.Paused(a) == k.Paused(b)
}

// AskOf is what obj asks for through its annotations, at most MaxAsked
// names and patterns together.
func AskOf(k Kind, obj client.Object) Ask {
	var ask Ask
	for _, entry := range split(annotation(k, obj, AnnotationReload)) {
		if len(ask.Names)+len(ask.Patterns) == MaxAsked {
			break
		}
		if !strings.ContainsAny(entry, regexSyntax) {
			ask.Names = append(ask.Names, entry)
		} else if re, err := regexp.Compile("^(?:" + entry + ")$"); err == nil && len(entry) <= maxPattern {
			ask.Patterns = append(ask.Patterns, re)
		}
	}
	if auto(annotation(k, obj, AnnotationAuto)) || auto(annotation(k, obj, AnnotationSecretAuto)) {
		excluded := split(annotation(k, obj, AnnotationExclude))
		for _, n := range used(&k.Template(obj).Spec) {
			if !slices.Contains(excluded, n) {
				ask.Names = append(ask.Names, n)
			}
		}
	}
	slices.Sort(ask.Names)
	ask.Names = slices.Compact(ask.Names)
	ask.Names = ask.Names[:min(len(ask.Names), max(0, MaxAsked-len(ask.Patterns)))]
	return ask
}

// regexSyntax are the characters that make a reload entry a pattern. A dot
// does not: it is common in names, and as a name it matches itself.
const regexSyntax = `*+?()|[]{}^$\`

// maxPattern is the longest pattern read: a Secret name's limit.
const maxPattern = 253

// annotation is the workload's annotation key, else its Pod template's.
func annotation(k Kind, obj client.Object, key string) string {
	if v, ok := obj.GetAnnotations()[key]; ok {
		return v
	}
	return k.Template(obj).Annotations[key]
}

// split is a comma-separated list without blanks.
func split(list string) []string {
	var out []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// auto reads a boolean as Reloader does (strconv.ParseBool).
func auto(v string) bool {
	b, _ := strconv.ParseBool(strings.TrimSpace(v))
	return b
}

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
