package render

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/app/controllers/externalsecret"
	"github.com/eso-dev/eso/app/controllers/pushsecret"
	"github.com/eso-dev/eso/app/refresh"
)

// syncTimeout bounds one object's sync, as the controller's does.
const syncTimeout = time.Minute

// result is what one object's sync came to.
type result struct {
	// what names the object: "ExternalSecret team/app".
	what string
	// out is what to print: the Secret written, or what was pushed; nil
	// when nothing was.
	out any
	// failed is the Ready condition's reason and message when the sync
	// failed: the render exits non-zero.
	failed string
	// note says why a sync that did not fail printed nothing.
	note string
}

// syncExternalSecret runs the ExternalSecret controller's reconcile once on
// es, held by w's API server (apiReader reads the template's sources and
// the target), and reads back the Secret it wrote and its Ready condition.
func syncExternalSecret(ctx context.Context, w *world, apiReader client.Reader, es *esv1.ExternalSecret) result {
	res := result{what: "ExternalSecret " + es.Namespace + "/" + es.Name}
	r := &externalsecret.Reconciler{
		Client:    w.local,
		APIReader: apiReader,
		Resolver:  w.resolver,
		// Events are the status's news; the render reports the status.
		Recorder:  &record.FakeRecorder{},
		Scheduler: refresh.NewScheduler(),
		Now:       time.Now,
	}
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	var after esv1.ExternalSecret
	ready := reconcileOnce(ctx, w, r, client.ObjectKeyFromObject(es), &after, &after.Status.Conditions, &res)
	if ready == nil {
		return res
	}
	var secret corev1.Secret
	err := w.local.Get(ctx, types.NamespacedName{Namespace: es.Namespace, Name: es.TargetName()}, &secret)
	if err != nil || es.Spec.Target.CreationPolicy == esv1.CreatePolicyNone {
		res.note = ready.Reason + ": " + ready.Message
		return res
	}
	res.out = asWritten(&secret)
	return res
}

// asWritten is the Secret as the controller sent it: without what the API
// server adds (uid, resourceVersion, timestamps).
func asWritten(s *corev1.Secret) *corev1.Secret {
	out := s.DeepCopy()
	out.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
	out.UID, out.ResourceVersion, out.Generation = "", "", 0
	out.CreationTimestamp = metav1.Time{}
	out.ManagedFields = nil
	return out
}

// pushReport is what a PushSecret pushes, store by store.
type pushReport struct {
	PushSecret string      `json:"pushSecret"`
	Pushes     []pushEntry `json:"pushes"`
}

// pushEntry is one value pushed to one remote key (or property) of one
// store. The value is shown only when asked for: as text, or in base64
// when it is not UTF-8.
type pushEntry struct {
	Store       string `json:"store"`
	RemoteKey   string `json:"remoteKey"`
	Property    string `json:"property,omitempty"`
	Bytes       int    `json:"bytes"`
	Value       string `json:"value,omitempty"`
	ValueBase64 string `json:"valueBase64,omitempty"`
}

// syncPushSecret runs the PushSecret controller's reconcile once on ps
// against the offline stores and reports what it pushed.
func syncPushSecret(ctx context.Context, w *world, ps *esv1alpha1.PushSecret, showValues bool) result {
	res := result{what: "PushSecret " + ps.Namespace + "/" + ps.Name}
	r := &pushsecret.Reconciler{
		Client:    w.local,
		APIReader: w.local,
		Resolver:  w.resolver,
		Recorder:  &record.FakeRecorder{},
		Now:       time.Now,
	}
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	w.pushes.mu.Lock()
	start := len(w.pushes.entries)
	w.pushes.mu.Unlock()
	var after esv1alpha1.PushSecret
	ready := reconcileOnce(ctx, w, r, client.ObjectKeyFromObject(ps), &after, &after.Status.Conditions, &res)
	if ready == nil {
		return res
	}
	report := pushReport{PushSecret: ps.Namespace + "/" + ps.Name, Pushes: []pushEntry{}}
	w.pushes.mu.Lock()
	for _, p := range w.pushes.entries[start:] {
		e := pushEntry{Store: p.Store, RemoteKey: p.RemoteKey, Property: p.Property, Bytes: len(p.Value)}
		switch {
		case !showValues:
		case utf8.Valid(p.Value):
			e.Value = string(p.Value)
		default:
			e.ValueBase64 = base64.StdEncoding.EncodeToString(p.Value)
		}
		report.Pushes = append(report.Pushes, e)
	}
	w.pushes.mu.Unlock()
	if len(report.Pushes) == 0 {
		res.note = fmt.Sprintf("nothing to push (%s: %s)", ready.Reason, ready.Message)
		return res
	}
	res.out = report
	return res
}

// reconcileOnce runs r once on key and reads the object back into after,
// whose Ready condition (of eso's type "Ready") is in conditions. It returns
// that condition when the sync succeeded; else nil, with res saying why: a
// failure's message, or a note when the controller left the object alone.
func reconcileOnce(ctx context.Context, w *world, r reconcile.Reconciler, key client.ObjectKey, after client.Object, conditions *[]metav1.Condition, res *result) *metav1.Condition {
	_, syncErr := r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
	if err := w.local.Get(ctx, key, after); err != nil {
		res.failed = err.Error()
		return nil
	}
	ready := meta.FindStatusCondition(*conditions, esv1.ConditionReady)
	switch {
	case ready == nil && syncErr != nil:
		res.failed = syncErr.Error()
	case ready == nil:
		res.note = "the controller leaves it alone: a store it names belongs to another controller class"
	case ready.Status != metav1.ConditionTrue:
		res.failed = ready.Reason + ": " + ready.Message
	default:
		return ready
	}
	return nil
}
