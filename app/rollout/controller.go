// Package rollout restarts workloads when eso changes the data of a Secret
// they asked for, as `kubectl rollout restart` does: a new restartedAt
// annotation on the Pod template, so the workload's own rollout strategy
// replaces its Pods.
//
// It is level-triggered. Each workload carries eso's record of the
// data-hash of every Secret it asks for (workloads.AnnotationRestartedFor).
// A Secret first seen is recorded without a restart (a Secret eso creates
// is no change); a recorded hash that differs from the Secret's current one
// is a change, and the restart and the new record go in one patch, so a
// change restarts the workload once, whatever eso's restarts or retries,
// and a refresh that changes nothing restarts nothing.
//
// A workload asks through Reloader's annotations (package workloads), or an
// ExternalSecret names it in spec.rolloutRestartTargets. Both live in the
// workload's namespace and name Secrets of that namespace only: nothing
// here reaches across namespaces.
package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.uber.org/fx"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/events"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/workloads"
)

// Reconciler brings one workload's restarts up to date with the Secrets it
// asks for. A request names the workload as "Kind/name" in its namespace.
type Reconciler struct {
	// Client reads workloads and ExternalSecrets from eso's cache, and
	// patches workloads.
	Client client.Client
	// SecretMetadata reads eso's Secrets' metadata from its cache;
	// APIReader a Secret's the cache holds only in part.
	SecretMetadata client.Reader
	APIReader      client.Reader
	Recorder       record.EventRecorder
	Now            func() time.Time
}

// request is the reconcile request of a workload.
func request(kind, namespace, name string) ctrl.Request {
	return ctrl.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: kind + "/" + name}}
}

// Reconcile restarts the workload if a Secret it asks for changed since its
// record, and records the Secrets it asks for.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	kindName, name, _ := strings.Cut(req.Name, "/")
	kind, ok := workloads.Named(kindName)
	if !ok {
		return ctrl.Result{}, nil
	}
	obj := kind.New()
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: req.Namespace, Name: name}, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	asked, err := r.asked(ctx, kind, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	before := readRecord(obj)
	after, changed, err := r.compare(ctx, obj.GetNamespace(), asked, before)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(changed) > 0 && kind.Paused(obj) {
		// As `kubectl rollout restart`: a paused Deployment is not
		// restarted. The changed Secrets keep their old hash, so the
		// restart happens once the Deployment is resumed.
		for _, s := range changed {
			after[s] = before[s]
		}
		r.Recorder.Eventf(obj, corev1.EventTypeWarning, "RolloutRestartPaused",
			"not restarted while paused: Secret %s changed; resume the rollout to restart it", listed(changed))
		changed = nil
	}
	if maps.Equal(after, before) {
		return ctrl.Result{}, nil
	}
	restartedAt := ""
	if len(changed) > 0 {
		// kubectl's format, to the second: a restart within the second of
		// the last one would change nothing, so it waits for the next.
		restartedAt = r.Now().Format(time.RFC3339)
		if restartedAt == kind.Template(obj).Annotations[workloads.AnnotationRestartedAt] {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
	}
	if err := r.patch(ctx, obj, after, restartedAt); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{Requeue: true}, nil // a stale cache: read it again
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if len(changed) > 0 {
		r.Recorder.Eventf(obj, corev1.EventTypeNormal, "RolloutRestarted",
			"restarted as kubectl rollout restart does: eso changed Secret %s", listed(changed))
	}
	return ctrl.Result{}, nil
}

// asked are the Secrets obj asks for: through its annotations (names, and
// eso's Secrets of its namespace that its patterns match), and as a target
// of ExternalSecrets of its namespace that name it; at most
// workloads.MaxAsked.
func (r *Reconciler) asked(ctx context.Context, kind workloads.Kind, obj client.Object) ([]string, error) {
	ask := workloads.AskOf(kind, obj)
	names := slices.Clone(ask.Names)
	in := client.InNamespace(obj.GetNamespace())
	if len(ask.Patterns) > 0 {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(manager.SecretGVK.GroupVersion().WithKind("SecretList"))
		if err := r.SecretMetadata.List(ctx, list, in); err != nil {
			return nil, err
		}
		for _, s := range list.Items {
			if ask.Matches(s.Name) {
				names = append(names, s.Name)
			}
		}
	}
	var naming esv1.ExternalSecretList
	if err := r.Client.List(ctx, &naming, in, client.MatchingFields{indexTargetWorkload: kind.Name + "/" + obj.GetName()}); err != nil {
		return nil, err
	}
	for i := range naming.Items {
		names = append(names, naming.Items[i].TargetName())
	}
	slices.Sort(names)
	names = slices.Compact(names)
	return names[:min(len(names), workloads.MaxAsked)], nil
}

// compare is the record after this reconcile and the Secrets that changed
// since before. A Secret eso does not manage (or not yet) keeps what before
// says of it; one no longer asked for leaves the record.
func (r *Reconciler) compare(ctx context.Context, namespace string, asked []string, before map[string]string) (after map[string]string, changed []string, err error) {
	after = map[string]string{}
	for _, name := range asked {
		hash, err := r.dataHash(ctx, namespace, name)
		if err != nil {
			return nil, nil, err
		}
		prev, seen := before[name]
		switch {
		case hash == "":
			if seen {
				after[name] = prev
			}
		case seen && prev != hash:
			changed = append(changed, name)
			after[name] = hash
		default:
			after[name] = hash
		}
	}
	return after, changed, nil
}

// dataHash is the data-hash eso recorded on its Secret namespace/name, or
// "" when there is no such Secret managed by eso.
func (r *Reconciler) dataHash(ctx context.Context, namespace, name string) (string, error) {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	s := manager.NewSecretMetadata()
	if err := r.SecretMetadata.Get(ctx, key, s); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	if manager.CacheTrimmed(s) {
		if err := r.APIReader.Get(ctx, key, s); err != nil {
			return "", client.IgnoreNotFound(err)
		}
	}
	return s.Annotations[esv1.AnnotationDataHash], nil
}

// patch writes the record (none when it is empty), and with restartedAt a
// new restartedAt on the Pod template, in one merge patch that holds only
// if the workload is still at the resourceVersion read.
func (r *Reconciler) patch(ctx context.Context, obj client.Object, rec map[string]string, restartedAt string) error {
	var recorded any // null removes the annotation
	if len(rec) > 0 {
		raw, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		recorded = string(raw)
	}
	body := map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(),
		"annotations":     map[string]any{workloads.AnnotationRestartedFor: recorded},
	}}
	if restartedAt != "" {
		body["spec"] = map[string]any{"template": map[string]any{"metadata": map[string]any{
			"annotations": map[string]any{workloads.AnnotationRestartedAt: restartedAt},
		}}}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return r.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, raw))
}

// listed names at most five Secrets, for an event.
func listed(names []string) string {
	if len(names) <= 5 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:5], ", "), len(names)-5)
}

// readRecord is eso's record on obj; one that does not parse (someone
// edited it) counts as none, so nothing restarts on its account.
func readRecord(obj client.Object) map[string]string {
	rec := map[string]string{}
	if v, ok := obj.GetAnnotations()[workloads.AnnotationRestartedFor]; ok {
		if err := json.Unmarshal([]byte(v), &rec); err != nil {
			return map[string]string{}
		}
	}
	return rec
}

// Module runs the rollout controller when eso runs with --rollout-restarts.
// It refuses to start without the permissions the feature needs: a cache
// that cannot list workloads would keep every controller from starting.
var Module = fx.Module("rollout-controller",
	fx.Invoke(func(mgr ctrl.Manager, cfg config.Config) error {
		if !cfg.RolloutRestarts {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := permitted(ctx, mgr.GetClient(), cfg.Namespaces()); err != nil {
			return fmt.Errorf("--rollout-restarts: %w", err)
		}
		r := &Reconciler{Client: mgr.GetClient(), SecretMetadata: mgr.GetCache(), APIReader: mgr.GetAPIReader(),
			Recorder: events.Recorder(mgr), Now: time.Now}
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("rollout restarts: %w", err)
		}
		return nil
	}),
)

// permitted checks that eso may list, watch and patch every workload kind
// in namespaces (none: the cluster), as the chart grants with
// rolloutRestarts.enabled.
func permitted(ctx context.Context, c client.Client, namespaces []string) error {
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	for _, ns := range namespaces {
		for _, k := range workloads.Kinds {
			resource := strings.ToLower(k.Name) + "s"
			for _, verb := range []string{"list", "watch", "patch"} {
				review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
					ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: "apps", Resource: resource}}}
				if err := c.Create(ctx, review); err != nil {
					return fmt.Errorf("checking eso's permissions: %w", err)
				}
				if !review.Status.Allowed {
					where := "cluster-wide"
					if ns != "" {
						where = "in namespace " + ns
					}
					return fmt.Errorf("eso may not %s %s.apps %s: grant it (the chart does with rolloutRestarts.enabled) or drop the flag", verb, resource, where)
				}
			}
		}
	}
	return nil
}
