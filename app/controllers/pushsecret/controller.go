// Package pushsecret reconciles PushSecrets: it pushes a Secret of the
// PushSecret's namespace (or the Secrets a label selector picks) to every
// store the PushSecret names, writes only what differs, and with
// deletionPolicy Delete removes exactly what it pushed once it no longer
// pushes it.
package pushsecret

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8srecord "k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/apis/lenient"
	"github.com/eso-dev/eso/app/generation"
	"github.com/eso-dev/eso/app/metrics"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/referents"
	"github.com/eso-dev/eso/app/secrettemplate"
	"github.com/eso-dev/eso/app/statuswrite"
	"github.com/eso-dev/eso/app/stores"
)

// Finalizer keeps a PushSecret with deletionPolicy Delete until what it
// pushed is deleted (upstream's name).
const Finalizer = "pushsecret.externalsecrets.io/finalizer"

// maxSourceSecrets bounds the Secrets one label selector may pick.
const maxSourceSecrets = 100

// maxEntries bounds the remote secrets a PushSecret pushes over all its
// stores (each a provider call per sync, and a record in its status, which
// must stay far below what the API server stores).
const maxEntries = 1000

// Reconciler reconciles PushSecrets.
type Reconciler struct {
	// Client reads PushSecrets and stores through the cache and writes.
	Client client.Client
	// APIReader reads source Secrets, which eso does not cache.
	APIReader client.Reader
	Resolver  *stores.Resolver
	// Generators resolves selector.generatorRef.
	Generators *generation.Resolver
	Recorder   k8srecord.EventRecorder
	// Sources re-queues a PushSecret when a Secret it pushes changes.
	Sources *referents.Queue
	Now     func() time.Time

	// checked remembers when each PushSecret last found its stores as they
	// should be. status.refreshTime moves only when a sync changed what was
	// pushed, so a refresh that finds nothing to do writes no status; this
	// schedules the next refresh. Lost on restart, when refreshTime stands in.
	// It also paces pushes (minSyncGap).
	checked sync.Map // types.NamespacedName → time.Time
	// statusWrites holds this controller's status writes its cache may not
	// show yet (statuswrite.Recent).
	statusWrites statuswrite.Recent
}

// Reconcile pushes what changed, deletes what was dropped and reports it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ps esv1alpha1.PushSecret
	if err := r.statusWrites.Get(ctx, r.Client, req.NamespacedName, &ps); err != nil {
		if apierrors.IsNotFound(err) {
			r.Sources.Unfollow(req)
			r.checked.Delete(req.NamespacedName)
			metrics.PushSecrets.Forget(req.Name, req.Namespace)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := ps.Status.DeepCopy()
	if !ps.DeletionTimestamp.IsZero() {
		// First, even for a spec that does not decode: the finalizer must
		// not hold it forever.
		return ctrl.Result{}, r.finalize(ctx, &ps, before)
	}
	if err := lenient.Error(&ps); err != nil {
		r.setReady(ctx, &ps, before, metav1.ConditionFalse, esv1alpha1.ReasonInvalidSpec, err.Error())
		return ctrl.Result{}, r.writeStatus(ctx, &ps, before)
	}
	if err := r.keepFinalizer(ctx, &ps); err != nil {
		return ctrl.Result{}, err
	}
	r.Sources.Follow(req, followed(&ps))
	return r.sync(ctx, &syncScope{ps: &ps, before: before, budget: secrettemplate.NewBudget()})
}

// keepFinalizer holds the finalizer exactly while deletionPolicy is Delete.
func (r *Reconciler) keepFinalizer(ctx context.Context, ps *esv1alpha1.PushSecret) error {
	want := ps.Spec.DeletionPolicy == esv1alpha1.DeletionPolicyDelete
	if want == controllerutil.ContainsFinalizer(ps, Finalizer) {
		return nil
	}
	if want {
		controllerutil.AddFinalizer(ps, Finalizer)
	} else {
		controllerutil.RemoveFinalizer(ps, Finalizer)
	}
	return r.Client.Update(ctx, ps)
}

// finalize deletes what a PushSecret with deletionPolicy Delete pushed,
// then lets it go. A failed deletion keeps it, reported, and retried.
func (r *Reconciler) finalize(ctx context.Context, ps *esv1alpha1.PushSecret, before *esv1alpha1.PushSecretStatus) error {
	r.Sources.Unfollow(ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ps)})
	if !controllerutil.ContainsFinalizer(ps, Finalizer) {
		return nil
	}
	// A spec that did not decode still has its records: they are deleted
	// (the policy reads as Delete when it cannot be read, since only a
	// PushSecret with Delete gets the finalizer).
	if ps.Spec.DeletionPolicy == esv1alpha1.DeletionPolicyDelete || lenient.Error(ps) != nil {
		current, err := resolveStores(ctx, r.Resolver, ps)
		if err != nil {
			current = nil // deletion resolves each recorded store by itself
		}
		failed, err := r.deleteRemote(ctx, ps, allRecorded(ps.Status.SyncedPushSecrets), current)
		if err != nil {
			ps.Status.SyncedPushSecrets = record(nil, failed)
			r.setReady(ctx, ps, before, metav1.ConditionFalse, esv1alpha1.ReasonErrored, "deleting what was pushed: "+err.Error())
			return errors.Join(err, r.writeStatus(ctx, ps, before))
		}
	}
	controllerutil.RemoveFinalizer(ps, Finalizer)
	return r.Client.Update(ctx, ps)
}

// followed are the Secrets a PushSecret pushes and the ConfigMaps and
// Secrets its template reads, to watch.
func followed(ps *esv1alpha1.PushSecret) []referents.Source {
	var out []referents.Source
	switch sel := ps.Spec.Selector.Secret; {
	case sel == nil:
		// The generated value's Secret: its deletion rotates the value.
		out = append(out, referents.Source{Namespace: ps.Namespace, Name: generatedName(ps)})
	case sel.Name != "":
		out = append(out, referents.Source{Namespace: ps.Namespace, Name: sel.Name})
	default:
		if s, err := metav1.LabelSelectorAsSelector(sel.Selector); err == nil {
			out = append(out, referents.Source{Namespace: ps.Namespace, Selector: s.String()})
		}
	}
	if tpl := ps.Spec.Template; tpl != nil {
		for _, from := range tpl.TemplateFrom {
			switch {
			case from.ConfigMap != nil:
				out = append(out, referents.Source{Kind: "ConfigMap", Namespace: ps.Namespace, Name: from.ConfigMap.Name})
			case from.Secret != nil:
				out = append(out, referents.Source{Namespace: ps.Namespace, Name: from.Secret.Name})
			}
		}
	}
	return out
}

// minSyncGap is the least time between two syncs of one PushSecret that
// push: a source that changes because it was pushed (a template over a
// Secret the same PushSecret writes) turns at this pace at most, not as
// fast as eso can write.
const minSyncGap = time.Second

// tooSoon is how long until the PushSecret may push again.
func (r *Reconciler) tooSoon(ps *esv1alpha1.PushSecret) time.Duration {
	t, ok := r.checked.Load(client.ObjectKeyFromObject(ps))
	if !ok {
		return 0
	}
	return max(minSyncGap-r.Now().Sub(t.(time.Time)), 0)
}

// record is the syncedPushSecrets of now, plus the deletions that failed.
func record(now map[string]synced, failed []deletion) esv1alpha1.SyncedPushSecretsMap {
	out := esv1alpha1.SyncedPushSecretsMap{}
	for key, s := range now {
		if len(s) > 0 {
			out[key] = map[string]esv1alpha1.PushSecretData(maps.Clone(s))
		}
	}
	for _, d := range failed {
		if out[d.storeKey] == nil {
			out[d.storeKey] = map[string]esv1alpha1.PushSecretData{}
		}
		out[d.storeKey][d.id] = d.data
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// errSourceGone: the Secret a PushSecret names does not exist.
var errSourceGone = errors.New("source Secret not found")

// sourcePage is how many Secrets one list of a label selector returns: at
// most this many full Secrets are held beyond what the budget has counted.
const sourcePage = 4

// sourceSecrets reads the Secrets the PushSecret pushes, sorted by name,
// charging their data to the sync's budget as each arrives.
func (r *Reconciler) sourceSecrets(ctx context.Context, ps *esv1alpha1.PushSecret, b *secrettemplate.Budget) ([]corev1.Secret, error) {
	sel := ps.Spec.Selector
	switch {
	case sel.Secret != nil && sel.Secret.Name != "":
		var s corev1.Secret
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ps.Namespace, Name: sel.Secret.Name}, &s); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("%w: %s", errSourceGone, sel.Secret.Name)
			}
			return nil, err
		}
		if err := b.Read("Secret "+s.Name, int64(s.Size())); err != nil {
			return nil, err
		}
		return []corev1.Secret{s}, nil
	case sel.Secret != nil:
		labels, err := metav1.LabelSelectorAsSelector(sel.Secret.Selector)
		if err != nil {
			return nil, fmt.Errorf("%w: selector.secret.selector: %v", errBadEntry, err)
		}
		var out []corev1.Secret
		for cont := ""; ; {
			var page corev1.SecretList
			if err := r.APIReader.List(ctx, &page, client.InNamespace(ps.Namespace), client.MatchingLabelsSelector{Selector: labels},
				client.Limit(sourcePage), client.Continue(cont)); err != nil {
				return nil, err
			}
			for _, s := range page.Items {
				if len(out) == maxSourceSecrets {
					return nil, fmt.Errorf("%w: selector.secret.selector picks more than %d Secrets", errBadEntry, maxSourceSecrets)
				}
				// The whole object: labels and annotations take room too.
				if err := b.Read("the selected Secrets", int64(s.Size())); err != nil {
					return nil, err
				}
				out = append(out, s)
			}
			if cont = page.Continue; cont == "" {
				break
			}
		}
		slices.SortFunc(out, func(a, b corev1.Secret) int { return strings.Compare(a.Name, b.Name) })
		return out, nil
	default:
		s, err := r.generated(ctx, ps)
		if err != nil {
			return nil, err
		}
		if err := b.Read("the generated Secret", int64(s.Size())); err != nil {
			return nil, err
		}
		return []corev1.Secret{*s}, nil
	}
}

// merged is the data pushed: each source Secret through the template, the
// template's keys over the Secret's own (upstream's rule); with a label
// selector, the Secrets in name order, a key in two of them being an error.
// Every render charges the one budget of the sync.
func merged(b *secrettemplate.Budget, ps *esv1alpha1.PushSecret, sources []corev1.Secret, tplSources secrettemplate.Sources) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, s := range sources {
		data := s.Data
		if err := b.Steps("the keys of Secret "+s.Name, len(data)); err != nil {
			return nil, err
		}
		if tpl := ps.Spec.Template; tpl != nil {
			res, err := secrettemplate.RenderWith(b, tpl, s.Data, tplSources)
			if err != nil {
				return nil, err
			}
			data = maps.Clone(s.Data)
			maps.Copy(data, res.Data)
		}
		for k, v := range data {
			if _, dup := out[k]; dup {
				return nil, fmt.Errorf("%w: key %q is in two selected Secrets", errBadEntry, k)
			}
			out[k] = v
		}
	}
	return out, nil
}

// versionStamp identifies what a sync pushed from: the PushSecret's
// generation, its sources' and template sources' versions and its stores'
// fingerprints.
func versionStamp(ps *esv1alpha1.PushSecret, sources []corev1.Secret, tplSources secrettemplate.Sources, current []*pushStore) string {
	h := sha256.New()
	for _, s := range sources {
		fmt.Fprintf(h, "%s=%s\n", s.Name, s.ResourceVersion)
	}
	for _, v := range tplSources.Versions {
		fmt.Fprintf(h, "template %s\n", v)
	}
	for _, s := range current {
		fmt.Fprintf(h, "%s=%s\n", s.target.key(), s.fingerprint)
	}
	return fmt.Sprintf("%d-%s", ps.Generation, hex.EncodeToString(h.Sum(nil))[:16])
}

// refreshDue says whether the stores still hold what the last sync pushed
// (nothing changed since, it succeeded, and no refresh is due), and how
// long until the next refresh (0: none, only changes).
func (r *Reconciler) refreshDue(ps *esv1alpha1.PushSecret, stamp string) (wait time.Duration, synced bool) {
	ready := meta.FindStatusCondition(ps.Status.Conditions, esv1alpha1.ConditionReady)
	if ps.Status.SyncedResourceVersion != stamp || ready == nil || ready.Status != metav1.ConditionTrue ||
		ready.ObservedGeneration != ps.Generation {
		return 0, false
	}
	interval := refreshInterval(ps)
	if interval == 0 {
		return 0, true
	}
	last := ps.Status.RefreshTime.Time
	if t, ok := r.checked.Load(client.ObjectKeyFromObject(ps)); ok && t.(time.Time).After(last) {
		last = t.(time.Time)
	}
	left := last.Add(interval).Sub(r.Now())
	return left, left > 0
}

func refreshInterval(ps *esv1alpha1.PushSecret) time.Duration {
	if ps.Spec.RefreshInterval == nil {
		return time.Hour
	}
	return ps.Spec.RefreshInterval.Duration
}

// sourceGone: with deletionPolicy Delete, what was pushed from a Secret
// that is gone is deleted; either way the PushSecret says the source is
// missing, and its creation re-queues it (it is followed).
func (r *Reconciler) sourceGone(ctx context.Context, ps *esv1alpha1.PushSecret, before *esv1alpha1.PushSecretStatus, cause error) (ctrl.Result, error) {
	if ps.Spec.DeletionPolicy != esv1alpha1.DeletionPolicyDelete || len(ps.Status.SyncedPushSecrets) == 0 {
		r.setReady(ctx, ps, before, metav1.ConditionFalse, esv1alpha1.ReasonErrored, cause.Error())
		return ctrl.Result{}, r.writeStatus(ctx, ps, before)
	}
	current, _ := resolveStores(ctx, r.Resolver, ps)
	failed, err := r.deleteRemote(ctx, ps, allRecorded(ps.Status.SyncedPushSecrets), current)
	ps.Status.SyncedPushSecrets = record(nil, failed)
	if err != nil {
		r.setReady(ctx, ps, before, metav1.ConditionFalse, esv1alpha1.ReasonErrored, cause.Error()+"; deleting what was pushed: "+err.Error())
		return ctrl.Result{}, errors.Join(err, r.writeStatus(ctx, ps, before))
	}
	r.setReady(ctx, ps, before, metav1.ConditionFalse, esv1alpha1.ReasonSourceDeleted, "source secret deleted; provider secrets cleaned up")
	return ctrl.Result{}, r.writeStatus(ctx, ps, before)
}

// failed records an error that stopped the whole sync.
func (r *Reconciler) failed(ctx context.Context, ps *esv1alpha1.PushSecret, before *esv1alpha1.PushSecretStatus, cause error) (ctrl.Result, error) {
	r.setReady(ctx, ps, before, metav1.ConditionFalse, reasonOf(cause), cause.Error())
	if err := r.writeStatus(ctx, ps, before); err != nil {
		return ctrl.Result{}, err
	}
	return r.retry(ps, cause)
}

// retry: what a change of the spec or source fixes waits for that change
// (watched), with the refresh as a safety net; templates past their time
// bound, which a less busy CPU may pass, are tried again at the recheck's
// pace; anything else backs off.
func (r *Reconciler) retry(ps *esv1alpha1.PushSecret, cause error) (ctrl.Result, error) {
	if errors.Is(cause, secrettemplate.ErrRenderTime) {
		return ctrl.Result{RequeueAfter: outcomes.RecheckInterval}, nil
	}
	if errors.Is(cause, errBadEntry) || errors.Is(cause, errNotOwned) || errors.Is(cause, errRefusedByStore) || errors.Is(cause, errLoop) || errors.Is(cause, errStatefulGenerator) ||
		errors.Is(cause, secrettemplate.ErrBudget) || errors.Is(cause, secrettemplate.ErrReadBudget) ||
		errors.Is(cause, stores.ErrStoreNotFound) || errors.Is(cause, stores.ErrStoreNotReady) || errors.Is(cause, stores.ErrNotAllowed) {
		return ctrl.Result{RequeueAfter: refreshInterval(ps)}, nil
	}
	return ctrl.Result{}, cause
}

// reasonOf is the Ready reason of a failure.
func reasonOf(err error) string {
	switch {
	case errors.Is(err, errLoop):
		return esv1alpha1.ReasonLoopRefused
	case errors.Is(err, errRefusedByStore):
		return esv1alpha1.ReasonRefusedByStore
	case errors.Is(err, errNotOwned):
		return esv1alpha1.ReasonNotOwned
	}
	return esv1alpha1.ReasonErrored
}

// setReady sets the Ready condition, with one event and one log line when
// its reason or message changes, not one per retry.
func (r *Reconciler) setReady(ctx context.Context, ps *esv1alpha1.PushSecret, before *esv1alpha1.PushSecretStatus, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&ps.Status.Conditions, metav1.Condition{Type: esv1alpha1.ConditionReady, Status: status,
		Reason: reason, Message: message, ObservedGeneration: ps.Generation})
	prev := meta.FindStatusCondition(before.Conditions, esv1alpha1.ConditionReady)
	if prev != nil && prev.Reason == reason && prev.Message == message {
		return
	}
	eventType := corev1.EventTypeNormal
	if status != metav1.ConditionTrue {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Event(ps, eventType, reason, message)
	if prev == nil || prev.Reason != reason {
		logr.FromContextOrDiscard(ctx).Info("PushSecret "+map[bool]string{true: "is ready", false: "is not ready"}[status == metav1.ConditionTrue],
			"reason", reason, "message", message)
	}
}

func (r *Reconciler) writeStatus(ctx context.Context, ps *esv1alpha1.PushSecret, before *esv1alpha1.PushSecretStatus) error {
	metrics.PushSecrets.SetConditions(ps.Status.Conditions, ps.Name, ps.Namespace)
	_, err := statuswrite.IfChanged(ctx, r.Client, &r.statusWrites, ps, *before, pushSecretStatus, "PushSecret")
	return err
}

func pushSecretStatus(o client.Object) *esv1alpha1.PushSecretStatus {
	return &o.(*esv1alpha1.PushSecret).Status
}
