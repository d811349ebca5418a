package events

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/eso-dev/eso/app/metrics"
)

// TestNormalEventsWithinTheBudgetWarningsAlways: past its reason's
// budget, a Normal Event is dropped and counted, while another reason's
// still go out; Warnings all go out.
func TestNormalEventsWithinTheBudgetWarningsAlways(t *testing.T) {
	fake := record.NewFakeRecorder(100)
	rec := Budgeted(fake, NewBudget(0, 2)) // two a reason, never refilled
	obj := &corev1.Secret{}
	dropped := testutil.ToFloat64(metrics.EventsDropped.WithLabelValues(corev1.EventTypeNormal))
	for range 3 {
		rec.Event(obj, corev1.EventTypeNormal, "SecretSynced", "synced")
		rec.Eventf(obj, corev1.EventTypeWarning, "SecretSyncedError", "failed: %s", "denied")
	}
	rec.AnnotatedEventf(obj, nil, corev1.EventTypeNormal, "SecretSynced", "synced")
	// Another reason has a budget of its own.
	rec.Eventf(obj, corev1.EventTypeNormal, "RolloutRestarted", "restarted %s", "web")
	close(fake.Events)
	normal, warnings := 0, 0
	for e := range fake.Events {
		if strings.HasPrefix(e, corev1.EventTypeNormal) {
			normal++
		} else {
			warnings++
		}
	}
	if normal != 3 || warnings != 3 {
		t.Errorf("recorded %d Normal and %d Warning Events, want 3 (2 synced, 1 restarted) and 3", normal, warnings)
	}
	if got := testutil.ToFloat64(metrics.EventsDropped.WithLabelValues(corev1.EventTypeNormal)) - dropped; got != 2 {
		t.Errorf("eso_events_dropped_total grew by %v, want 2", got)
	}
}

// TestReasonsBeyondTheBoundShareABudget: the budgets kept are bounded;
// reasons past the bound share one.
func TestReasonsBeyondTheBoundShareABudget(t *testing.T) {
	b := NewBudget(0, 1)
	for i := range maxReasons {
		if !b.allow(fmt.Sprint("reason-", i)) {
			t.Fatalf("reason %d had no budget of its own", i)
		}
	}
	if !b.allow("one-more") || b.allow("and-another") {
		t.Error("reasons past the bound do not share one budget")
	}
	if len(b.byReason) != maxReasons {
		t.Errorf("%d budgets kept, want %d", len(b.byReason), maxReasons)
	}
}
