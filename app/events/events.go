// Package events is how eso's controllers record Events: through the
// manager's recorder, with a budget on routine ones.
//
// A Normal Event says something went as asked (a Secret synced, a workload
// restarted). A first sync of 10,000 ExternalSecrets would write one per
// Secret, one API write in every seven and an object etcd keeps for an
// hour, and so would any tenant whose objects change often; client-go's
// queue dropped most of them anyway, once it filled. So each reason of
// Normal Event has a budget per process, and the rest are counted in
// eso_events_dropped_total: a flood of Secrets synced does not crowd out a
// workload restarted. Warnings say something needs a person and are never
// held back here (client-go's spam filter still limits each object's).
package events

import (
	"sync"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eso-dev/eso/app/metrics"
)

// The budget of each reason of Normal Event: a burst for a handful of
// objects changing at once, then a steady rate an API server does not
// notice. The budget is per process, so replicas sharing the work each
// have one: at 10 a second after 100, three replicas' first sync of 10,000
// ExternalSecrets in 1,000 namespaces wrote 2,173 Events, one API write in
// ten (make bench).
const (
	normalPerSecond = 2
	normalBurst     = 50
)

// maxReasons bounds the budgets kept. Reasons are eso's own constants, a
// dozen or so; any beyond share one budget.
const maxReasons = 64

// component names eso as the source of its Events.
const component = "eso"

// normal is the process's budgets: the API server's load is per process,
// whichever controller records.
var normal = NewBudget(normalPerSecond, normalBurst)

// Recorder is mgr's event recorder for eso's controllers, Normal Events
// within the process's budget.
func Recorder(mgr ctrl.Manager) record.EventRecorder {
	return Budgeted(mgr.GetEventRecorderFor(component), normal)
}

// Budget is a rate limit per reason of Normal Event.
type Budget struct {
	perSecond rate.Limit
	burst     int

	mu       sync.Mutex
	byReason map[string]*rate.Limiter
	others   *rate.Limiter // once maxReasons are kept
}

// NewBudget allows each reason burst Events at once and perSecond after.
func NewBudget(perSecond rate.Limit, burst int) *Budget {
	return &Budget{perSecond: perSecond, burst: burst, byReason: map[string]*rate.Limiter{},
		others: rate.NewLimiter(perSecond, burst)}
}

// allow takes one Event of reason from its budget, if there is one left.
func (b *Budget) allow(reason string) bool {
	b.mu.Lock()
	l, ok := b.byReason[reason]
	if !ok {
		l = b.others
		if len(b.byReason) < maxReasons {
			l = rate.NewLimiter(b.perSecond, b.burst)
			b.byReason[reason] = l
		}
	}
	b.mu.Unlock()
	return l.Allow()
}

// Budgeted returns a recorder that passes Warnings to inner and Normal
// Events as far as budget allows, counting the ones it drops.
func Budgeted(inner record.EventRecorder, budget *Budget) record.EventRecorder {
	return &budgeted{inner: inner, budget: budget}
}

type budgeted struct {
	inner  record.EventRecorder
	budget *Budget
}

func (b *budgeted) allow(eventtype, reason string) bool {
	if eventtype != corev1.EventTypeNormal || b.budget.allow(reason) {
		return true
	}
	metrics.EventsDropped.WithLabelValues(eventtype).Inc()
	return false
}

func (b *budgeted) Event(object runtime.Object, eventtype, reason, message string) {
	if b.allow(eventtype, reason) {
		b.inner.Event(object, eventtype, reason, message)
	}
}

func (b *budgeted) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	if b.allow(eventtype, reason) {
		b.inner.Eventf(object, eventtype, reason, messageFmt, args...)
	}
}

func (b *budgeted) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	if b.allow(eventtype, reason) {
		b.inner.AnnotatedEventf(object, annotations, eventtype, reason, messageFmt, args...)
	}
}
