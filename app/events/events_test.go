package events

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/eso-dev/eso/app/metrics"
)

// TestNormalEventsWithinTheBudgetWarningsAlways: past the budget, Normal
// Events are dropped and counted; Warnings all go out.
func TestNormalEventsWithinTheBudgetWarningsAlways(t *testing.T) {
	fake := record.NewFakeRecorder(100)
	rec := Budgeted(fake, rate.NewLimiter(0, 2)) // two, never refilled
	obj := &corev1.Secret{}
	dropped := testutil.ToFloat64(metrics.EventsDropped.WithLabelValues(corev1.EventTypeNormal))
	for range 3 {
		rec.Event(obj, corev1.EventTypeNormal, "SecretSynced", "synced")
		rec.Eventf(obj, corev1.EventTypeWarning, "SecretSyncedError", "failed: %s", "denied")
	}
	rec.AnnotatedEventf(obj, nil, corev1.EventTypeNormal, "SecretSynced", "synced")
	close(fake.Events)
	normal, warnings := 0, 0
	for e := range fake.Events {
		if strings.HasPrefix(e, corev1.EventTypeNormal) {
			normal++
		} else {
			warnings++
		}
	}
	if normal != 2 || warnings != 3 {
		t.Errorf("recorded %d Normal and %d Warning Events, want 2 and 3", normal, warnings)
	}
	if got := testutil.ToFloat64(metrics.EventsDropped.WithLabelValues(corev1.EventTypeNormal)) - dropped; got != 2 {
		t.Errorf("eso_events_dropped_total grew by %v, want 2", got)
	}
}
